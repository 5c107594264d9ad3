import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RESPONSES_INPUT_ITEMS_LISTINGS } from 'skein/testing';
import { runSkein } from '../cli/cli-process.js';
import { useEmulator } from '../support/emulator.js';

// Both ways a server lists a continuing response's input_items (a chained thread is read from them).
for (const listing of RESPONSES_INPUT_ITEMS_LISTINGS) describe(`history: skein threads show / fork (the real CLI process against the emulator; input_items: ${listing})`, function () {
  this.timeout(120_000);
  let dir: string;
  const emu = useEmulator({ responsesInputItems: listing });
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skein-hist-cli-'));
    await writeFile(
      path.join(dir, 'skein.yaml'),
      [
        'plugins:',
        `  openai: { apiKey: test, baseURL: "${emu.emulator.openaiBaseURL}", maxRetries: 0 }`,
        'agents:',
        '  helper: { client: openai-chat, model: emu }',
        '  keeper: { client: openai-responses, model: emu, conversation: true }',
        '  chainer: { client: openai-responses, model: emu }',
        '',
      ].join('\n'),
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const skein = (args: string[], input?: string) => runSkein(args, { cwd: dir, input });
  const config = () => path.join(dir, 'skein.yaml');

  it('forks a message-store thread at a message into a new registry thread that continues from there', async () => {
    const made = await skein(['chat', '--config', config(), '--agent', 'helper', '--thread', 'orig'], 'My name is Ada\nMy name is Bo\n');
    expect(made.code, made.stderr).to.equal(0);
    // --at N is the message "threads show" prints as #N: the fork ends with it.
    const original = await skein(['threads', 'show', 'orig']);
    const second = /^#2 .*$/m.exec(original.stdout)![0];
    expect(second).to.match(/^#2 assistant/);
    const forked = await skein(['threads', 'fork', 'orig', '--at', '2', '--as', 'branch']);
    expect(forked.code, forked.stderr).to.equal(0);
    expect(forked.stdout).to.contain('Forked thread orig at message 2 into branch (2 messages).');
    const show = await skein(['threads', 'show', 'branch']);
    expect(show.stdout).to.contain('messages: 2');
    expect(show.stdout).to.contain('My name is Ada');
    expect(show.stdout).to.not.contain('My name is Bo');
    expect(show.stdout.trimEnd().split('\n').at(-1)).to.equal(second);
    const resumed = await skein(['chat', '--config', config(), '--agent', 'helper', '--thread', 'branch'], "What's my name?\n");
    expect(resumed.stdout).to.contain('Your name is Ada.');
    expect((await skein(['threads', 'show', 'orig'])).stdout).to.contain('messages: 4');
  });

  it('shows a service thread’s messages read from the service, and forks it', async () => {
    const made = await skein(['chat', '--config', config(), '--agent', 'keeper', '--thread', 'svc'], 'My name is Gus\n');
    expect(made.code, made.stderr).to.equal(0);
    const show = await skein(['threads', 'show', 'svc']);
    expect(show.code, show.stderr).to.equal(0);
    expect(show.stdout).to.match(/service thread: conv_/);
    expect(show.stdout).to.contain('messages: 2');
    expect(show.stdout).to.contain('My name is Gus');
    const forked = await skein(['threads', 'fork', 'svc']);
    expect(forked.code, forked.stderr).to.equal(0);
    expect(forked.stdout).to.match(/Forked thread svc into [A-Za-z0-9_-]+ \(2 messages\)/);
  });

  it('shows a previous_response_id chain with each message once, and forks it where a response ends', async () => {
    const made = await skein(['chat', '--config', config(), '--agent', 'chainer', '--thread', 'chain'], 'My name is Ada\nMy name is Bo\nWhat is my name?\n');
    expect(made.code, made.stderr).to.equal(0);
    expect(made.stdout).to.contain('Your name is Bo.');
    const show = await skein(['threads', 'show', 'chain']);
    expect(show.code, show.stderr).to.equal(0);
    expect(show.stdout).to.match(/service thread: resp_/);
    expect(show.stdout).to.contain('messages: 6');
    for (const said of ['My name is Ada', 'My name is Bo', 'What is my name?']) expect(show.stdout.split(said), said).to.have.length(2);
    const forked = await skein(['threads', 'fork', 'chain', '--at', '2', '--as', 'chain-branch']);
    expect(forked.code, forked.stderr).to.equal(0);
    expect(forked.stdout).to.contain('Forked thread chain at message 2 into chain-branch (2 messages).');
    const resumed = await skein(['chat', '--config', config(), '--agent', 'chainer', '--thread', 'chain-branch'], "What's my name?\n");
    expect(resumed.stdout).to.contain('Your name is Ada.');
    expect((await skein(['threads', 'show', 'chain-branch'])).stdout).to.contain('messages: 4');
    expect((await skein(['threads', 'show', 'chain'])).stdout).to.contain('messages: 6');
  });

  it('rejects a bad --at with a usage error and a number out of range with the typed error naming the valid range, saving nothing', async () => {
    const bad = await skein(['threads', 'fork', 'orig', '--at', 'two']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('--at takes a message number (1, 2, ... as "threads show" numbers them');
    for (const at of ['0', '5', '99']) {
      const far = await skein(['threads', 'fork', 'orig', '--at', at, '--as', 'never']);
      expect(far.code, `--at ${at}`).to.equal(1);
      expect(far.stderr).to.contain(`skein threads: HistoryPositionError: Expected --at to be a message number as "skein threads show orig" numbers them (#1 is the oldest), found ${at}; valid numbers: from 1 to 4.`);
      expect((await skein(['threads', 'show', 'never'])).code).to.not.equal(0);
    }
    // The last message is a valid end.
    const last = await skein(['threads', 'fork', 'orig', '--at', '4', '--as', 'whole']);
    expect(last.stdout).to.contain('Forked thread orig at message 4 into whole (4 messages).');
  });
});
