import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawRequest } from '../http/raw-request.js';
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

  /** Starts `skein devui` and also collects what it writes on stderr. */
  async function startDevuiCli(args: string[], env: NodeJS.ProcessEnv = { ...process.env }): Promise<{ out: string; stderr: () => string }> {
    let err = '';
    const out = start(['devui', '--config', SAMPLE_CONFIG, '--port', '0', '--threads-dir', threadsDir, '--no-emulator', ...args], { ...env, OPENAI_API_KEY: 'unused' }, CLI);
    child!.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    return { out: await out, stderr: () => err };
  }
  const devuiAddress = (out: string) => new URL(/Skein Dev UI: (http:\/\/\S+)/.exec(out)![1]!);

  it('`skein devui --host 0.0.0.0` without --expose refuses to start and says why (exit 1)', async () => {
    const failure = await start(['devui', '--config', SAMPLE_CONFIG, '--port', '0', '--host', '0.0.0.0', '--no-emulator'], { ...process.env }, CLI).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).to.match(/exited with 1: .*--host 0\.0\.0\.0 would let other machines reach it\. Add --expose/s);
  });

  it('`skein devui --host 0.0.0.0 --expose` starts and warns on stderr what is exposed', async () => {
    const { out, stderr } = await startDevuiCli(['--host', '0.0.0.0', '--expose']);
    const address = devuiAddress(out);
    expect(address.host).to.match(/^127\.0\.0\.1:\d+$/);
    while (!stderr().includes('Dev UI running')) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stderr()).to.contain(`Warning: the Dev UI listens on 0.0.0.0:${address.port} (--expose), so other machines can reach it`);
    expect(stderr()).to.contain('run the configured agents and their tools');
  });

  it('`skein devui --no-token` serves the API without a token and warns; --allowed-host and SKEIN_ALLOWED_HOSTS add hosts', async () => {
    const { out, stderr } = await startDevuiCli(['--no-token', '--allowed-host', 'devbox.local'], { ...process.env, SKEIN_ALLOWED_HOSTS: 'second.local' });
    const address = devuiAddress(out);
    expect(address.search).to.equal('');
    while (!stderr().includes('Dev UI running')) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stderr()).to.contain("Warning: the Dev UI's access token is off (--no-token)");
    expect((await fetch(`${address.origin}/api/agents`)).status).to.equal(200);
    const withHost = (host: string) => rawRequest(address.origin, { path: '/api/agents', headers: { host: `${host}:${address.port}` } });
    expect((await withHost('devbox.local')).status).to.equal(200);
    expect((await withHost('second.local')).status).to.equal(200);
    expect((await withHost('attacker.example')).status).to.equal(403);
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
