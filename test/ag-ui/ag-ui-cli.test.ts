import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { HttpAgent, lastText, runVerified, say, tempDir } from './ag-ui-fixture.js';
import { DATABASE_URL, NEEDS_POSTGRES, RUN_ID, dropSchema, postgresAvailable, withService } from '../dbos/dbos-support.js';
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

/** Writes a config file of `lines` into `dir`; resolves with its path. */
async function writeConfig(dir: string, lines: string[]): Promise<string> {
  const file = path.join(dir, 'skein.yaml');
  await writeFile(file, [...lines, ''].join('\n'));
  return file;
}

/**
 * The hooks of a suite that serves a config file: an emulator, a temp dir with the config
 * `lines(dir, openaiBaseURL)` wrote, and the served children stopped after each test.
 */
function serveSuite(lines: (dir: string, openaiBaseURL: string) => string[], cleanup: () => Promise<void> = async () => undefined): { dir: string; config: string; children: ChildProcess[] } {
  const suite = { dir: '', config: '', children: [] as ChildProcess[] };
  const emu = useEmulator();
  before(async () => {
    suite.dir = await tempDir();
    suite.config = await writeConfig(suite.dir, lines(suite.dir, emu.emulator.openaiBaseURL));
  });
  afterEach(async () => {
    for (const child of suite.children.splice(0)) await stop(child);
  });
  after(async () => {
    await cleanup();
    await rm(suite.dir, { recursive: true, force: true });
  });
  return suite;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

describe('skein ag-ui serve --config', () => {
  const suite = serveSuite((dir, baseURL) => [
    'plugins:',
    `  openai: { apiKey: k, baseURL: "${baseURL}", maxRetries: 0 }`,
    `  sqlite: { path: ${JSON.stringify(path.join(dir, 'threads.db'))} }`,
    `  ag-ui: { server: { agents: [helper], corsOrigins: ["http://app.example.com"], threadsDir: ${JSON.stringify(path.join(dir, 'ag-ui'))} } }`,
    'agents:',
    '  helper: { client: openai-chat, model: gpt-4.1, messageStore: sqlite }',
    '  other: { client: openai-chat, model: gpt-4.1 }',
  ]);

  it('serves the agents plugins.ag-ui.server names; a conversation outlives a restart', async () => {
    const [url, ...more] = await serve(['--config', suite.config, '--port', '0'], suite.children);
    expect(more).to.deep.equal([]);
    expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/agents\/helper$/);
    const agent = new HttpAgent({ url: url! });
    await say(agent, 'My name is Ada.');
    expect(lastText(agent)).to.equal('Nice to meet you, Ada!');
    const preflight = await fetch(url!, { method: 'OPTIONS', headers: { origin: 'http://app.example.com', 'access-control-request-method': 'POST' } });
    expect(preflight.status).to.equal(204);
    await stop(suite.children.pop()!);

    const [again] = await serve(['--config', suite.config, '--port', '0', '--agent', 'helper', '--agent', 'other'], suite.children);
    const reload = new HttpAgent({ url: again!, threadId: agent.threadId });
    await runVerified(reload);
    expect(reload.messages.map((m) => m.content)).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!']);
    await say(reload, 'What is my name?');
    expect(lastText(reload)).to.equal('Your name is Ada.');
  });

  it('names a missing agent, and a bad plugins.ag-ui setting, with its path', async () => {
    const missing = await serve(['--config', suite.config, '--agent', 'nobody'], suite.children).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(missing).to.contain('agents.nobody:');
    const bad = path.join(suite.dir, 'bad.yaml');
    await writeFile(bad, 'plugins:\n  ag-ui: { server: { port: "eighty" } }\nagents: {}\n');
    const error = await serve(['--config', bad], suite.children).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(error).to.contain('plugins.ag-ui.server.port');
  });
});

withService('skein ag-ui serve: durable agents and predictive state from the config', await postgresAvailable(), NEEDS_POSTGRES, () =>
  describe('skein ag-ui serve --config (durability, predictState)', function () {
    this.timeout(60_000);
    const schema = `dbos_${RUN_ID}_agui_cli`;
    const suite = serveSuite(
      (dir, baseURL) => [
        'plugins:',
        `  openai: { apiKey: k, baseURL: "${baseURL}", maxRetries: 0 }`,
        `  sqlite: { path: ${JSON.stringify(path.join(dir, 'threads.db'))} }`,
        `  dbos: { systemDatabaseUrl: "${DATABASE_URL}", schema: ${schema}, pollingIntervalMs: 50 }`,
        `  ag-ui: { server: { threadsDir: ${JSON.stringify(path.join(dir, 'ag-ui'))}, predictState: { writer: [{ stateKey: document, tool: write_document, toolArgument: document }] } } }`,
        'agents:',
        '  keeper: { client: openai-chat, model: gpt-4.1, messageStore: sqlite, durability: { engine: dbos } }',
        '  writer: { client: openai-chat, model: gpt-4.1, messageStore: sqlite }',
      ],
      () => dropSchema(schema),
    );

    it('runs an agent with durability: as a DBOS workflow under the client\'s runId, and announces the configured predictState', async () => {
      const urls = await serve(['--config', suite.config, '--port', '0'], suite.children);
      const keeperUrl = urls.find((u) => u.endsWith('/agents/keeper'))!;
      const writerUrl = urls.find((u) => u.endsWith('/agents/writer'))!;
      const keeper = new HttpAgent({ url: keeperUrl });
      await say(keeper, 'My name is Ada.', { runId: 'cli-durable-run-1' });
      expect(lastText(keeper)).to.equal('Nice to meet you, Ada!');
      // The run is the engine's: its workflow is recorded under the AG-UI runId, finished.
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        const { rows } = await client.query<{ status: string }>(`SELECT status FROM "${schema}".workflow_status WHERE workflow_uuid = $1`, ['cli-durable-run-1']);
        expect(rows.map((r) => r.status)).to.deep.equal(['SUCCESS']);
      } finally {
        await client.end();
      }
      const { events } = await say(new HttpAgent({ url: writerUrl }), 'Hello');
      const custom = events.find((e) => e.type === 'CUSTOM') as { name?: string; value?: unknown } | undefined;
      expect(custom).to.deep.include({ name: 'PredictState', value: [{ state_key: 'document', tool: 'write_document', tool_argument: 'document' }] });
      // A reload (a new page on the thread) reads the turn the durable run left in the thread.
      const again = new HttpAgent({ url: keeperUrl, threadId: keeper.threadId });
      await runVerified(again);
      expect(again.messages.map((m) => m.content)).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!']);
    });

    it('a bad predictState or dbos setting is named with its path', async () => {
      const bad = path.join(suite.dir, 'bad.yaml');
      await writeFile(bad, 'plugins:\n  dbos: { systemDatabaseUrl: "mysql://x" }\n  ag-ui: { server: { predictState: { writer: [{ stateKey: document }] } } }\nagents: {}\n');
      const error = await serve(['--config', bad], suite.children).then(
        () => '',
        (e: Error) => e.message,
      );
      expect(error).to.contain('plugins.dbos.systemDatabaseUrl');
      expect(error).to.contain('plugins.ag-ui.server.predictState.writer[0].tool:');
    });
  }),
);
