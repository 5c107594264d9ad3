import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { rawRequest } from '../http/raw-request.js';

const cliPath = fileURLToPath(new URL('../../src/testing/emulator/cli.js', import.meta.url));
const skeinPath = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** Starts a CLI and resolves with the base URL it prints. */
async function startCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ child: ChildProcess; baseURL: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => resolve(chunk.toString('utf8').trim()));
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${err}`)));
  });
  expect(line).to.match(/^OPENAI_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/v1$/);
  return { child, baseURL: line.split('=')[1]! };
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  return code;
}

/** A chat completion request with the Host header given (as a rebound page or another container sends it). */
const chatWithHost = (baseURL: string, host: string) =>
  rawRequest(baseURL, {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { host, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'ping' }] }),
  });

describe('Emulator CLI', () => {
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child) await stop(child);
    child = undefined;
  });

  it('prints the base URL, serves it, and exits cleanly on SIGTERM', async () => {
    const started = await startCli([cliPath, '--port', '0']);
    child = started.child;
    const client = new OpenAI({ apiKey: 'test', baseURL: started.baseURL, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'ping' }] });
    expect(completion.choices[0].message.content).to.equal('You said: "ping" (I have seen 0 earlier messages.)');
    expect(await stop(child)).to.equal(0);
  });

  it('answers only loopback Host names by default: a rebound Host gets 403 naming --allowed-host', async () => {
    const started = await startCli([cliPath, '--port', '0']);
    child = started.child;
    const port = new URL(started.baseURL).port;
    const refused = await chatWithHost(started.baseURL, `attacker.example:${port}`);
    expect(refused.status).to.equal(403);
    expect(refused.text).to.contain('--allowed-host');
    expect((await chatWithHost(started.baseURL, `localhost:${port}`)).status).to.equal(200);
  });

  it('--allowed-host (repeatable) and SKEIN_ALLOWED_HOSTS add hosts; `skein emulator` takes the same flag', async () => {
    for (const args of [
      [cliPath, '--port', '0', '--allowed-host', 'emulator.internal', '--allowed-host', 'other.internal'],
      [skeinPath, 'emulator', '--port', '0', '--allowed-host', 'emulator.internal', '--allowed-host', 'other.internal'],
    ]) {
      const started = await startCli(args);
      child = started.child;
      const port = new URL(started.baseURL).port;
      expect((await chatWithHost(started.baseURL, `emulator.internal:${port}`)).status).to.equal(200);
      expect((await chatWithHost(started.baseURL, `other.internal:${port}`)).status).to.equal(200);
      expect((await chatWithHost(started.baseURL, `attacker.example:${port}`)).status).to.equal(403);
      await stop(child);
    }
    const started = await startCli([cliPath, '--port', '0'], { ...process.env, SKEIN_ALLOWED_HOSTS: 'from-env.internal, second.internal' });
    child = started.child;
    const port = new URL(started.baseURL).port;
    expect((await chatWithHost(started.baseURL, `second.internal:${port}`)).status).to.equal(200);
    expect((await chatWithHost(started.baseURL, `attacker.example:${port}`)).status).to.equal(403);
  });

  it('`skein emulator` with a bad --allowed-host says what it expected and exits 1', async () => {
    const failure = await startCli([skeinPath, 'emulator', '--port', '0', '--allowed-host', 'http://x/']).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).to.match(/exited with 1: .*expected a host name or host:port.*"http:\/\/x\/"/s);
  });
});
