import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpAgent, lastText, runVerified, say, tempDir } from './ag-ui-fixture.js';
import { useEmulator } from '../support/emulator.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/cli/main.js');

/** Starts `skein ag-ui serve` and resolves with the URLs it prints (one per agent). */
async function serve(args: string[], children: ChildProcess[]): Promise<string[]> {
  const child = spawn(process.execPath, [CLI, 'ag-ui', 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise<string[]>((resolve, reject) => {
    let out = '';
    let err = '';
    // The URLs go to stdout, then "Ctrl-C stops it." to stderr: both streams must have arrived.
    const check = () => {
      if (err.includes('Ctrl-C stops it.') && out.includes('\n')) resolve([...out.matchAll(/AG-UI agent at (http:\/\/\S+)/g)].map((m) => m[1]!));
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      check();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      check();
    });
    child.once('exit', (code) => reject(new Error(`skein ag-ui serve exited with ${code}: ${err}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

describe('skein ag-ui serve --config', () => {
  let dir: string;
  let config: string;
  const children: ChildProcess[] = [];

  const emu = useEmulator();
  before(async () => {
    dir = await tempDir();
    config = path.join(dir, 'skein.yaml');
    await writeFile(
      config,
      [
        'plugins:',
        `  openai: { apiKey: k, baseURL: "${emu.emulator.openaiBaseURL}", maxRetries: 0 }`,
        `  sqlite: { path: ${JSON.stringify(path.join(dir, 'threads.db'))} }`,
        `  ag-ui: { server: { agents: [helper], corsOrigins: ["http://app.example.com"], threadsDir: ${JSON.stringify(path.join(dir, 'ag-ui'))} } }`,
        'agents:',
        '  helper: { client: openai-chat, model: gpt-4.1, messageStore: sqlite }',
        '  other: { client: openai-chat, model: gpt-4.1 }',
        '',
      ].join('\n'),
    );
  });
  afterEach(async () => {
    for (const child of children.splice(0)) await stop(child);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the agents plugins.ag-ui.server names; a conversation outlives a restart', async () => {
    const [url, ...more] = await serve(['--config', config, '--port', '0'], children);
    expect(more).to.deep.equal([]);
    expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/agents\/helper$/);
    const agent = new HttpAgent({ url: url! });
    await say(agent, 'My name is Ada.');
    expect(lastText(agent)).to.equal('Nice to meet you, Ada!');
    const preflight = await fetch(url!, { method: 'OPTIONS', headers: { origin: 'http://app.example.com', 'access-control-request-method': 'POST' } });
    expect(preflight.status).to.equal(204);
    await stop(children.pop()!);

    const [again] = await serve(['--config', config, '--port', '0', '--agent', 'helper', '--agent', 'other'], children);
    const reload = new HttpAgent({ url: again!, threadId: agent.threadId });
    await runVerified(reload);
    expect(reload.messages.map((m) => m.content)).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!']);
    await say(reload, 'What is my name?');
    expect(lastText(reload)).to.equal('Your name is Ada.');
  });

  it('names a missing agent, and a bad plugins.ag-ui setting, with its path', async () => {
    const missing = await serve(['--config', config, '--agent', 'nobody'], children).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(missing).to.contain('agents.nobody:');
    const bad = path.join(dir, 'bad.yaml');
    await writeFile(bad, 'plugins:\n  ag-ui: { server: { port: "eighty" } }\nagents: {}\n');
    const error = await serve(['--config', bad], children).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(error).to.contain('plugins.ag-ui.server.port');
  });
});
