import { expect } from 'chai';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runSkein } from './cli-process.js';
import { useEmulator } from '../support/emulator.js';

/** The environment of a user who has not set a key yet. */
function envWithoutKeys(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['OPENAI_API_KEY', 'OPENAI_ADMIN_KEY', 'AZURE_OPENAI_API_KEY']) delete env[name];
  return env;
}

/** A message, not a stack: no `    at ...` frames and no SDK error class. */
function expectNoStack(stderr: string): void {
  expect(stderr).not.to.match(/^\s+at /m);
  expect(stderr).not.to.contain('unexpected error');
  expect(stderr).not.to.contain('OpenAIError');
}

/**
 * Issue 16 items 8-10 as the CLI shows them: every Skein error is its message and exit code 1,
 * on every command path that loads a config or a thread.
 */
describe('skein: errors are messages, not stacks (the real process)', function () {
  this.timeout(120_000);
  let dir: string;
  let keyed: string;
  let keyless: string;

  const emu = useEmulator();
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skein-cli-errors-'));
    keyed = path.join(dir, 'keyed.yaml');
    keyless = path.join(dir, 'keyless.yaml');
    const agents = ['agents:', '  helper: { client: openai-chat, model: emu }', '  keeper: { client: openai-responses, model: emu, conversation: true }', ''];
    await writeFile(keyed, [`plugins:`, `  openai: { apiKey: test, baseURL: "${emu.emulator.openaiBaseURL}", maxRetries: 0 }`, ...agents].join('\n'));
    await writeFile(keyless, [`plugins:`, `  openai: { baseURL: "${emu.emulator.openaiBaseURL}", maxRetries: 0 }`, ...agents].join('\n'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const skein = (args: string[], input = '') => runSkein(args, { cwd: dir, input, env: envWithoutKeys() });
  const KEY_MESSAGE = 'The openai-chat client has no OpenAI API key: set the apiKey option (plugins.openai.apiKey in a config file, e.g. apiKey: ${OPENAI_API_KEY}) or the OPENAI_API_KEY environment variable.';

  it('skein chat without an API key prints which setting and variable to set, no stack, exit 1', async () => {
    const result = await skein(['chat', '--config', keyless, '--agent', 'helper'], 'hello\n');
    expect(result.code).to.equal(1);
    expect(result.stderr).to.equal(`skein chat: invalid configuration (1 problem):\n  - ${KEY_MESSAGE}\n`);
    expect(result.stdout).to.equal('');
  });

  it('skein threads show / delete through a keyless config: the message, no stack, and nothing deleted', async () => {
    const made = await skein(['chat', '--config', keyed, '--agent', 'keeper', '--thread', 'svc'], 'My name is Ida\n');
    expect(made.code, made.stderr).to.equal(0);

    const show = await skein(['threads', 'show', 'svc', '--config', keyless, '--agent', 'keeper']);
    expect(show.code).to.equal(1);
    expect(show.stderr).to.contain('The openai-responses client has no OpenAI API key');
    expectNoStack(show.stderr);

    const deleted = await skein(['threads', 'delete', 'svc', '--yes', '--config', keyless, '--agent', 'keeper']);
    expect(deleted.code).to.equal(1);
    expect(deleted.stderr).to.contain('The openai-responses client has no OpenAI API key');
    expectNoStack(deleted.stderr);
    expect(await readdir(path.join(dir, '.skein', 'threads'))).to.deep.equal(['svc.json']);
  });

  it('config problems on chat, threads and devui: each root cause once, no stack, exit 1', async () => {
    const bad = path.join(dir, 'bad.yaml');
    await writeFile(bad, ['plugins:', '  openai: { apiKey: "${NO_SUCH_KEY}", maxRetries: "${RETRIES}" }', 'agents:', '  helper: { client: openai-chat, model: emu }', ''].join('\n'));
    const expected = [
      'invalid configuration (2 problems):',
      '  - plugins.openai.apiKey: environment variable NO_SUCH_KEY is not set (referenced as ${NO_SUCH_KEY}). Set it, or give a default: ${NO_SUCH_KEY:-value}.',
      '  - plugins.openai.maxRetries: environment variable RETRIES is not set (referenced as ${RETRIES}). Set it, or give a default: ${RETRIES:-value}.',
    ].join('\n');
    const made = await skein(['chat', '--config', keyed, '--agent', 'helper', '--thread', 'mine'], 'hi\n');
    expect(made.code, made.stderr).to.equal(0);
    for (const args of [
      ['chat', '--config', bad, '--agent', 'helper'],
      ['threads', 'show', 'mine', '--config', bad, '--agent', 'helper'],
      ['devui', '--config', bad, '--no-emulator', '--port', '0'],
    ]) {
      const result = await skein(args, '');
      expect(result.code, args.join(' ')).to.equal(1);
      expect(result.stderr, args.join(' ')).to.equal(`skein ${args[0]}: ${expected}\n`);
    }
  });

  it('a broken thread file and a bad ${VAR} value are messages too', async () => {
    const broken = path.join(dir, 'broken.json');
    await writeFile(broken, '{ "$type": ');
    const thread = await skein(['chat', '--config', keyed, '--agent', 'helper', '--thread', broken], 'hi\n');
    expect(thread.code).to.equal(1);
    expect(thread.stderr).to.match(/^skein chat: SkeinError: Thread file .*broken\.json is not valid JSON/);
    expectNoStack(thread.stderr);

    const typed = path.join(dir, 'typed.yaml');
    await writeFile(typed, ['plugins:', `  openai: { apiKey: test, baseURL: "${emu.emulator.openaiBaseURL}" }`, 'agents:', '  support: { client: openai-chat, maxToolIterations: "${MAX}" }', ''].join('\n'));
    const result = await runSkein(['chat', '--config', typed, '--agent', 'support'], { cwd: dir, input: '', env: { ...envWithoutKeys(), MAX: 'abc' } });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.equal(
      'skein chat: invalid configuration (1 problem):\n  - agents.support.maxToolIterations: expected an integer from ${MAX} but found "abc". Set MAX to an integer.\n',
    );
  });

  it('a port already in use is a message on devui and emulator, not a stack', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = String((busy.address() as { port: number }).port);
    try {
      for (const args of [
        ['devui', '--config', keyed, '--no-emulator', '--port', port],
        ['emulator', '--port', port],
      ]) {
        const result = await skein(args);
        expect(result.code, args.join(' ')).to.equal(1);
        expect(result.stderr, args.join(' ')).to.contain('EADDRINUSE');
        expectNoStack(result.stderr);
      }
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it('a configuration problem found during a turn ends the chat with it (exit 1) instead of failing every turn', async () => {
    const noModel = path.join(dir, 'no-model.yaml');
    await writeFile(noModel, ['plugins:', `  openai: { apiKey: test, baseURL: "${emu.emulator.openaiBaseURL}" }`, 'agents:', '  helper: { client: openai-chat }', ''].join('\n'));
    const result = await skein(['chat', '--config', noModel, '--agent', 'helper'], 'hello\nhello again\n');
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/skein chat: invalid configuration \(1 problem\):\n {2}- No model for openai-chat: set `model`/);
    expect(result.stderr.match(/No model/g)).to.have.length(1);
    expectNoStack(result.stderr);
  });
});
