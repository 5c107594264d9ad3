import { expect } from 'chai';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runSkein } from './cli-process.js';
import { useEmulator } from '../support/emulator.js';

const WEATHER_PLUGIN = fileURLToPath(new URL('./fixtures/weather-tool-plugin.js', import.meta.url));
const WAITING = '[approval needed] delete_file {"path":"notes.txt"}: answer /approve or /reject [reason]';

/** Issue 16 item 5: a chat stopped at a tool needing approval is answered in a later process. */
describe('skein chat: approvals pending across processes (the real process against the emulator)', function () {
  this.timeout(120_000);
  let dir: string;
  let config: string;
  let log: string;

  const emu = useEmulator();
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skein-approvals-'));
    config = path.join(dir, 'skein.yaml');
    log = path.join(dir, 'deleted.log');
    await writeFile(
      config,
      [
        'plugins:',
        `  openai: { apiKey: test, baseURL: "${emu.emulator.openaiBaseURL}", maxRetries: 0 }`,
        `  weather: { module: "${WEATHER_PLUGIN}", export: weatherToolPlugin, log: "${log}" }`,
        'agents:',
        '  helper: { client: openai-chat, model: emu, tools: [get_weather, delete_file] }',
        '  ops: { client: openai-assistants, model: emu, tools: [get_weather, delete_file], polling: { intervalMs: 1 } }',
        '',
      ].join('\n'),
    );
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const chat = (thread: string, input: string) => runSkein(['chat', '--config', config, '--agent', 'helper', '--thread', thread], { cwd: dir, input });
  /** How many times the tool really ran (its side effect: one line per run). */
  const runs = async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;

  async function stopAtApproval(thread: string): Promise<void> {
    const first = await chat(thread, 'call delete_file {"path":"notes.txt"}\n');
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.contain(WAITING);
    expect(await runs()).to.equal(0);
  }

  it('shows the pending call when a new process resumes the thread file; /approve runs the tool exactly once', async () => {
    const threadFile = path.join(dir, 't.json');
    await stopAtApproval(threadFile);

    const second = await chat(threadFile, '/approve\n');
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stderr).to.contain('waiting for your approval of a tool call');
    expect(second.stderr).not.to.contain('No tool call is waiting');
    const lines = second.stdout.split('\n');
    // The pending call is shown on resume, before the answer runs it.
    expect(lines[0]).to.equal(WAITING);
    expect(lines).to.include('[tool result] delete_file: "deleted notes.txt"');
    expect(lines).to.include('helper: delete_file returned: deleted notes.txt');
    expect(await runs()).to.equal(1);

    const third = await chat(threadFile, '/approve\n');
    expect(third.code, third.stderr).to.equal(0);
    expect(third.stdout).not.to.contain('[approval needed]');
    expect(third.stderr).to.contain('No tool call is waiting for approval.');
    expect(await runs()).to.equal(1);
  });

  it('/reject in a new process (registry thread) answers the pending call without running it', async () => {
    await stopAtApproval('pending-1');
    const show = await runSkein(['threads', 'show', 'pending-1'], { cwd: dir });
    expect(show.stdout).to.contain('waiting for approval: delete_file {"path":"notes.txt"} (answer in "skein chat" with /approve or /reject)');

    const second = await chat('pending-1', '/reject not that file\n');
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout.split('\n')[0]).to.equal(WAITING);
    expect(second.stdout).to.contain('[tool error] delete_file: not run: the user rejected this call: not that file');
    expect(await runs()).to.equal(0);

    const record = JSON.parse(await readFile(path.join(dir, '.skein', 'threads', 'pending-1.json'), 'utf8')) as { thread: { state?: Record<string, unknown> } };
    expect(record.thread.state?.pendingApprovals).to.equal(undefined);
    const third = await chat('pending-1', '/approve\n');
    expect(third.stderr).to.contain('No tool call is waiting for approval.');
    expect(await runs()).to.equal(0);
  });

  it('keeps an approved call settled when the reply after it fails, so answering again never runs it twice', async () => {
    const threadFile = path.join(dir, 'fails.json');
    await stopAtApproval(threadFile);

    emu.emulator.injectFault({ kind: 'status', status: 500, message: 'The model is down.', path: '/v1/chat/completions' });
    const second = await chat(threadFile, '/approve\n');
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout).to.contain('[tool result] delete_file: "deleted notes.txt"');
    expect(second.stderr).to.contain('The model is down.');
    expect(second.stderr).to.contain('The approved tool calls ran and their results are kept');
    expect(await runs()).to.equal(1);

    const third = await chat(threadFile, '/approve\nWhat happened?\n');
    expect(third.code, third.stderr).to.equal(0);
    expect(third.stdout).not.to.contain('[approval needed]');
    expect(third.stderr).to.contain('No tool call is waiting for approval.');
    expect(third.stdout).to.contain('helper: ');
    expect(await runs()).to.equal(1);
  });

  describe('an openai-assistants agent (issue 28 §2: the run processor asks too)', () => {
    const chatOps = (thread: string, input: string) => runSkein(['chat', '--config', config, '--agent', 'ops', '--thread', thread], { cwd: dir, input });

    it('stops at the call in one process; /approve in the next runs the tool exactly once and the model reads its result', async () => {
      const threadFile = path.join(dir, 'ops.json');
      const first = await chatOps(threadFile, 'call delete_file {"path":"notes.txt"}\n');
      expect(first.code, first.stderr).to.equal(0);
      expect(first.stdout).to.contain(WAITING);
      expect(await runs()).to.equal(0);

      const second = await chatOps(threadFile, '/approve\n');
      expect(second.code, second.stderr).to.equal(0);
      expect(second.stdout.split('\n')).to.include('ops: delete_file returned: deleted notes.txt');
      expect(await runs()).to.equal(1);
      const third = await chatOps(threadFile, '/approve\n');
      expect(third.stderr).to.contain('No tool call is waiting for approval.');
      expect(await runs()).to.equal(1);
    });

    it('threads show lists the settled call as a tool call and its result, never the note the service run read', async () => {
      const expiry = emu.emulator.runExpirySeconds;
      emu.emulator.runExpirySeconds = 0; // the waiting run would expire before the answer anyway
      try {
        await chatOps('ops-show', 'call delete_file {"path":"notes.txt"}\n');
        const second = await chatOps('ops-show', '/approve\n');
        expect(second.code, second.stderr).to.equal(0);
        const show = await runSkein(['threads', 'show', 'ops-show'], { cwd: dir });
        expect(show.code, show.stderr).to.equal(0);
        expect(show.stdout).to.contain('messages: 4');
        const lines = show.stdout.split('\n').filter((line) => line.startsWith('#')).map((line) => line.replace(/ \d{4}-\d\d-\d\dT[^ ]+:/, ':'));
        expect(lines).to.deep.equal([
          '#1 user: call delete_file {"path":"notes.txt"}',
          '#2 assistant: [tool call] delete_file {"path":"notes.txt"}',
          '#3 tool: [tool result] delete_file: "deleted notes.txt"',
          '#4 assistant (ops): delete_file returned: deleted notes.txt',
        ]);
        expect(show.stdout).to.not.contain('[tool results]');
        expect(await runs()).to.equal(1);
      } finally {
        emu.emulator.runExpirySeconds = expiry;
      }
    });

    it('/reject never runs the tool; the model reads the rejection', async () => {
      const threadFile = path.join(dir, 'ops-reject.json');
      await chatOps(threadFile, 'call delete_file {"path":"notes.txt"}\n');
      const second = await chatOps(threadFile, '/reject not that file\n');
      expect(second.code, second.stderr).to.equal(0);
      expect(second.stdout).to.contain('ops: delete_file returned: not run: the user rejected this call: not that file.');
      expect(await runs()).to.equal(0);
    });
  });
});
