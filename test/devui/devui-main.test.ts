import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSse, SAMPLE_CONFIG } from './devui-fixture.js';

const MAIN = fileURLToPath(new URL('../../src/devui/main.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

describe('Dev UI entry point (what `npm run devui` runs)', () => {
  let child: ChildProcess | undefined;
  let threadsDir: string;

  beforeEach(async () => {
    threadsDir = await mkdtemp(path.join(os.tmpdir(), 'skein-devui-main-'));
  });
  afterEach(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(threadsDir, { recursive: true, force: true });
  });

  /** Starts main.js and resolves with its stdout up to the line with the Dev UI's address. */
  function start(args: string[], env: NodeJS.ProcessEnv, entry = MAIN): Promise<string> {
    child = spawn(process.execPath, [entry, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    return new Promise((resolve, reject) => {
      let out = '';
      let err = '';
      child!.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (/Skein Dev UI: http:\/\/\S+/.test(out)) resolve(out);
      });
      child!.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
      child!.once('exit', (code) => reject(new Error(`main.js exited with ${code}: ${err || out}`)));
    });
  }

  it('starts the emulator when no OPENAI_API_KEY is set and serves the sample agents, which answer', async () => {
    const env = { ...process.env };
    delete env.OPENAI_API_KEY;
    delete env.OPENAI_BASE_URL;
    const out = await start(['--config', SAMPLE_CONFIG, '--port', '0', '--threads-dir', threadsDir], env);
    expect(out).to.contain('No OPENAI_API_KEY: using the local emulator at http://127.0.0.1:');
    const printed = new URL(/Skein Dev UI: (http:\/\/\S+)/.exec(out)![1]!);
    expect(printed.searchParams.get('token')).to.match(/^[A-Za-z0-9_-]{32}$/);
    const url = printed.origin;
    expect((await fetch(`${url}/api/agents`)).status).to.equal(401);
    // What a script does with the printed address: send its token as a bearer token.
    const auth = { authorization: `Bearer ${printed.searchParams.get('token')}` };
    const agents = (await (await fetch(`${url}/api/agents`, { headers: auth })).json()) as { agents: { name: string }[] };
    expect(agents.agents.map((a) => a.name)).to.deep.equal(['assistant', 'responses']);
    const response = await fetch(`${url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify({ agent: 'assistant', text: 'My name is Zoe' }) });
    const events = await readSse(response);
    expect(events.at(-1)!.event).to.equal('done');
  });

  it('runs as `skein devui` with the same options', async () => {
    const env = { ...process.env };
    delete env.OPENAI_API_KEY;
    delete env.OPENAI_BASE_URL;
    const out = await start(['devui', '--config', SAMPLE_CONFIG, '--port', '0', '--threads-dir', threadsDir], env, CLI);
    const printed = new URL(/Skein Dev UI: (http:\/\/\S+)/.exec(out)![1]!);
    // What the page does with the printed address: trade the token for the session cookie.
    const session = await fetch(`${printed.origin}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: printed.searchParams.get('token') }) });
    const cookie = session.headers.get('set-cookie')!;
    expect(cookie).to.match(/^skein-token-\d+=[A-Za-z0-9_-]+; HttpOnly; SameSite=Strict; Path=\/$/);
    const agents = (await (await fetch(`${printed.origin}/api/agents`, { headers: { cookie: cookie.split(';')[0]! } })).json()) as { agents: { name: string }[] };
    expect(agents.agents.map((a) => a.name)).to.deep.equal(['assistant', 'responses']);
  });

  it('`skein devui` without --config is a usage error (exit 2)', async () => {
    const failure = await start(['devui'], { ...process.env }, CLI).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).to.match(/exited with 2: .*--config <file> is required/s);
  });

  it('without --config says what is missing and exits non-zero', async () => {
    const failure = await start([], { ...process.env }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).to.match(/exited with 1: --config <file> is required/);
  });
});
