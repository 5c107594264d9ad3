/**
 * Issue 9 for the durable stores: a ChatAgent on the emulator (Chat Completions, real `openai`
 * SDK) keeping its history in SQLite, Redis or PostgreSQL (`messageStore: 'sqlite' | 'redis' |
 * 'postgres'`). Faults leave the stored history unchanged (read back directly from the database),
 * a completed turn lands once, two app instances in two processes never lose or duplicate a turn,
 * and a password in the connection URL appears nowhere.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import type { Container } from 'inversify';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import pg from 'pg';
import sinon from 'sinon';
import {
  AbortError,
  type AIAgent,
  type ChatMessage,
  ConnectionError,
  RateLimitError,
  type SerializedThread,
  ServiceError,
  type SkeinPlugin,
  SkeinError,
  StoreError,
  ThreadConflictError,
  agentToken,
  createContainer,
  messageText,
} from 'skein';
import { openaiPlugin } from 'skein/openai';
import { PostgresChatMessageStoreFactory, postgresStorePlugin } from 'skein/store-postgres';
import { RedisChatMessageStoreFactory, redisStorePlugin } from 'skein/store-redis';
import { SqliteChatMessageStoreFactory, sqliteStorePlugin } from 'skein/store-sqlite';
import { Emulator, type Fault } from 'skein/testing';
import { closedPort } from '../stores/fault-proxy.js';
import { redisServerInstalled, startPrivateRedis } from '../stores/private-redis.js';
import { DATABASE_URL, REDIS_URL, RUN_ID, dropSchema, postgresAvailable, redisAvailable, tempDir, withService } from '../stores/services.js';
import { openRawSqlite } from '../stores/raw-sqlite.js';
import { type Mode, captureConsole, rejection, turn, until } from './providers.js';

const WORKER = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures', 'store-agent-worker.js');
const CHAT = { path: '/v1/chat/completions', method: 'POST' };
const PASSWORD = 's3cr3t-xyz';
const redisUp = await redisAvailable();
const postgresUp = await postgresAvailable();

/** One durable store under test: how to plug it in, and how to read a thread straight from the database. */
interface StoreCase {
  id: 'sqlite' | 'redis' | 'postgres';
  up: boolean;
  how: string;
  /** Plugin settings (also handed to the worker process). */
  config: Record<string, string>;
  plugin(config?: Record<string, string>): SkeinPlugin;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** The thread's messages as stored, read without skein. */
  readDirect(key: string): Promise<ChatMessage[]>;
  /** Ends the store's connections held by a container. */
  close(container: Container): Promise<void>;
}

function sqliteCase(): StoreCase {
  const dir = tempDir();
  const path = join(dir.path, 'threads.db');
  return {
    id: 'sqlite',
    up: true,
    how: '',
    config: { path },
    plugin: (config = { path }) => sqliteStorePlugin({ path: config.path! }),
    setup: async () => {},
    teardown: async () => dir.remove(),
    readDirect: async (key) => {
      const db = openRawSqlite(path, { readonly: true });
      try {
        return db
          .all<{ body: string }>('SELECT body FROM skein_messages WHERE thread_key = ? ORDER BY seq', key)
          .map((r) => JSON.parse(r.body) as ChatMessage);
      } finally {
        db.close();
      }
    },
    close: async (c) => c.get(SqliteChatMessageStoreFactory).close(),
  };
}

function redisCase(): StoreCase {
  const keyPrefix = `skein-test:${RUN_ID}:rel:`;
  let admin: Redis | undefined;
  return {
    id: 'redis',
    up: redisUp,
    how: 'start Redis on 127.0.0.1:6379 or set REDIS_URL',
    config: { url: REDIS_URL, keyPrefix },
    plugin: (config = { url: REDIS_URL, keyPrefix }) => redisStorePlugin({ url: config.url!, keyPrefix: config.keyPrefix! }),
    setup: async () => {
      admin = new Redis(REDIS_URL);
    },
    teardown: async () => {
      if (!admin) return;
      const keys = await admin.keys(`${keyPrefix}*`);
      if (keys.length) await admin.del(...keys);
      await admin.quit();
    },
    readDirect: async (key) => (await admin!.lrange(`${keyPrefix}{${key}}:m`, 0, -1)).map((b) => JSON.parse(b) as ChatMessage),
    close: (c) => c.get(RedisChatMessageStoreFactory).close(),
  };
}

function postgresCase(): StoreCase {
  const schema = `skein_${RUN_ID}_rel`;
  let admin: pg.Client | undefined;
  return {
    id: 'postgres',
    up: postgresUp,
    how: 'start PostgreSQL on 127.0.0.1:5432 (database "test") or set DATABASE_URL',
    config: { connectionString: DATABASE_URL, schema },
    plugin: (config = { connectionString: DATABASE_URL, schema }) => postgresStorePlugin({ connectionString: config.connectionString!, schema: config.schema! }),
    setup: async () => {
      admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      const factory = new PostgresChatMessageStoreFactory({ connectionString: DATABASE_URL, schema });
      await factory.migrate();
      await factory.close();
    },
    teardown: async () => {
      if (!admin) return;
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    },
    readDirect: async (key) =>
      (await admin!.query<{ body: string }>(`SELECT body FROM "${schema}".skein_messages WHERE thread_key = $1 ORDER BY seq`, [key])).rows.map(
        (r) => JSON.parse(r.body) as ChatMessage,
      ),
    close: (c) => c.get(PostgresChatMessageStoreFactory).close(),
  };
}

function keyOf(state: SerializedThread): string {
  return (state.store as { key: string }).key;
}

/** A fault on the next model call and the error type the caller must get. */
interface FaultCase {
  title: string;
  modes: Mode[];
  /** Starts the failing turn; `signal` aborts it. */
  provoke(emulator: Emulator, start: (signal?: AbortSignal, onText?: () => void) => Promise<string>): Promise<unknown>;
  expected: new (...args: never[]) => Error;
}

const FAULTS: FaultCase[] = [
  {
    title: 'HTTP 429 past maxRetries',
    modes: ['run', 'runStream'],
    provoke: (emulator, start) => {
      emulator.injectFault({ kind: 'status', status: 429, retryAfterSeconds: 0, ...CHAT } as Fault);
      return rejection(start());
    },
    expected: RateLimitError,
  },
  {
    title: 'HTTP 500',
    modes: ['run', 'runStream'],
    provoke: (emulator, start) => {
      emulator.injectFault({ kind: 'status', status: 500, ...CHAT } as Fault);
      return rejection(start());
    },
    expected: ServiceError,
  },
  {
    title: 'a connection cut mid-stream',
    modes: ['runStream'],
    provoke: (emulator, start) => {
      emulator.injectFault({ kind: 'cut-stream', afterEvents: 3, ...CHAT } as Fault);
      return rejection(start());
    },
    expected: ConnectionError,
  },
  {
    title: 'abort mid-stream (text already streamed)',
    modes: ['runStream'],
    provoke: async (emulator, start) => {
      emulator.injectFault({ kind: 'stall-stream', afterEvents: 3, ...CHAT } as Fault);
      const controller = new AbortController();
      return rejection(start(controller.signal, () => controller.abort()));
    },
    expected: AbortError,
  },
  {
    title: 'abort while the request is out',
    modes: ['run'],
    provoke: async (emulator, start) => {
      emulator.injectFault({ kind: 'latency', ms: 5_000, ...CHAT } as Fault);
      const controller = new AbortController();
      const sent = emulator.requestsTo(CHAT.path).length;
      const pending = rejection(start(controller.signal));
      await until(() => emulator.requestsTo(CHAT.path).length > sent);
      controller.abort();
      return pending;
    },
    expected: AbortError,
  },
];

const texts = (messages: readonly ChatMessage[]) => messages.map(messageText);

for (const make of [sqliteCase, redisCase, postgresCase]) {
  const store = make();
  withService(`reliability with a durable store: ${store.id}`, store.up, store.how, () => describe(`ChatAgent on Chat Completions, messageStore: '${store.id}'`, function () {
    this.timeout(30_000);
    let emulator: Emulator;
    const containers: Container[] = [];
    const newAgent = (maxRetries = 0) => {
      const c = createContainer({
        plugins: [openaiPlugin({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries }), store.plugin()],
        agents: { bot: { client: 'openai-chat', model: 'gpt-test', messageStore: store.id } },
      });
      containers.push(c);
      return c.get(agentToken('bot'));
    };

    before(() => store.setup());
    after(() => store.teardown());
    beforeEach(async () => {
      emulator = await Emulator.start();
    });
    afterEach(async () => {
      sinon.restore();
      for (const c of containers.splice(0)) await store.close(c);
      await emulator.stop();
    });

    for (const fault of FAULTS) {
      for (const mode of fault.modes) {
        it(`${mode}: ${fault.title} -> ${fault.expected.name}; the stored history is unchanged and the next turn lands once`, async () => {
          const agent = newAgent();
          const thread = agent.getNewThread();
          expect(await turn(agent, mode, 'My name is Ada.', thread)).to.equal('Nice to meet you, Ada!');
          const state = await thread.serialize();
          const before = await store.readDirect(keyOf(state));
          expect(texts(before)).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!']);

          const error = await fault.provoke(emulator, (signal, onText) => turn(agent, mode, 'My name is Bob.', thread, signal, onText));
          expect(error).to.be.instanceOf(fault.expected);
          expect(error).to.not.be.instanceOf(StoreError);
          await until(() => !thread.busy);
          expect(await store.readDirect(keyOf(state)), 'stored history after the failed turn').to.deep.equal(before);
          expect(await thread.serialize()).to.deep.equal(state);

          // Another instance sees the same history; the same thread goes on and its turn lands once.
          emulator.clearFaults();
          const other = newAgent();
          expect(texts(await (await other.deserializeThread(state)).messageStore!.listMessages())).to.deep.equal(texts(before));
          expect(await turn(agent, mode, "What's my name?", thread)).to.equal('Your name is Ada.');
          expect(texts(await store.readDirect(keyOf(state)))).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!', "What's my name?", 'Your name is Ada.']);
        });
      }
    }

    it('HTTP 429 then success within maxRetries: the turn lands exactly once', async () => {
      const agent = newAgent(2);
      const thread = agent.getNewThread();
      emulator.injectFault({ kind: 'status', status: 429, retryAfterSeconds: 0, ...CHAT } as Fault);
      expect((await agent.run('My name is Ada.', { thread })).text).to.equal('Nice to meet you, Ada!');
      expect(emulator.requestsTo(CHAT.path)).to.have.length(2);
      expect(texts(await store.readDirect(keyOf(await thread.serialize())))).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!']);
    });

    it('two app instances in two processes on one thread: the loser gets ThreadConflictError and, after reload and retry, both turns are there once, in order', async () => {
      const agent = newAgent();
      const thread = agent.getNewThread();
      await agent.run('My name is Ada.', { thread });
      const state = await thread.serialize();
      const spawnWorker = (input: string, hold: boolean) =>
        startWorker({ store: store.id, config: store.config, baseURL: emulator.openaiBaseURL, state, input, hold });

      // B reads the thread and gets its answer, then waits before appending ...
      const b = spawnWorker('My name is Bob.', true);
      await b.reached('appending');
      // ... while A runs a whole turn on the same thread.
      const a = spawnWorker('My name is Cy.', false);
      expect((await a.reached('done')).text).to.equal('Nice to meet you, Cy!');
      await a.exited;
      b.go();
      const conflict = await b.reached('conflict');
      expect(conflict).to.include({ expected: 2, actual: 4 });
      expect((await b.reached('done')).text).to.equal('Nice to meet you, Bob!');
      await b.exited;

      expect(texts(await store.readDirect(keyOf(state)))).to.deep.equal([
        'My name is Ada.',
        'Nice to meet you, Ada!',
        'My name is Cy.',
        'Nice to meet you, Cy!',
        'My name is Bob.',
        'Nice to meet you, Bob!',
      ]);
      // The first instance's thread object reads the history afresh before its next turn.
      expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Bob.');
      expect(await store.readDirect(keyOf(state))).to.have.length(8);
    });
  }));
}

interface WorkerLine {
  at: string;
  [k: string]: unknown;
}

function startWorker(args: object): { reached(at: string): Promise<WorkerLine>; go(): void; exited: Promise<void> } {
  const child: ChildProcess = spawn(process.execPath, [WORKER, JSON.stringify(args)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: WorkerLine[] = [];
  let buffer = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buffer.slice(0, nl)) as WorkerLine);
      buffer = buffer.slice(nl + 1);
    }
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve, reject) =>
    child.on('exit', (code) => {
      exitCode = code;
      for (const w of waiters.splice(0)) w();
      if (code === 0) resolve();
      else reject(new Error(`worker exited with ${code}: ${stderr}`));
    }),
  );
  exited.catch(() => {});
  return {
    exited,
    go: () => child.stdin!.end('go\n'),
    reached: async (at) => {
      for (;;) {
        const line = lines.find((l) => l.at === at);
        if (line) return line;
        if (exitCode !== undefined) throw new Error(`worker exited (${exitCode}) before "${at}": ${stderr}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

/** Everything an error exposes: message, stack, own properties and its cause chain, deeply. */
function errorText(error: unknown): string {
  const parts = [inspect(error, { depth: 8, showHidden: true, getters: false })];
  for (let e: unknown = error, i = 0; e instanceof Error && i < 10; e = e.cause, i++) parts.push(e.message, e.stack ?? '');
  return parts.join('\n');
}

describe('reliability with a durable store: a password in the connection URL never leaks', function () {
  this.timeout(30_000);
  let emulator: Emulator;
  let logged: string[];
  const containers: { container: Container; close: () => Promise<void> }[] = [];

  beforeEach(async () => {
    emulator = await Emulator.start();
    logged = captureConsole();
  });
  afterEach(async () => {
    sinon.restore();
    for (const c of containers.splice(0)) await c.close();
    await emulator.stop();
  });

  function agentWith(id: 'redis' | 'postgres', plugin: SkeinPlugin): { agent: AIAgent; container: Container } {
    const container = createContainer({
      plugins: [openaiPlugin({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 }), plugin],
      agents: { bot: { client: 'openai-chat', model: 'gpt-test', messageStore: id } },
    });
    const factory = container.get<{ close(): Promise<void> }>(id === 'redis' ? RedisChatMessageStoreFactory : PostgresChatMessageStoreFactory);
    containers.push({ container, close: () => factory.close() });
    return { agent: container.get(agentToken('bot')), container };
  }

  function expectClean(text: string, where: string, secrets: string[]): void {
    for (const secret of secrets) expect(text.includes(secret), `${where} contains "${secret}":\n${text}`).to.equal(false);
  }

  /**
   * Runs a turn through `good` (whose URL holds the password), then collects a model failure, a
   * version conflict, a store that is down and one that refuses the login, and searches the
   * serialized thread, the thread and factory objects, every error and the console for the secrets.
   */
  async function searchEverything(id: 'redis' | 'postgres', good: SkeinPlugin, down: SkeinPlugin, refused: SkeinPlugin, secrets: string[]) {
    const { agent, container } = agentWith(id, good);
    const thread = agent.getNewThread();
    expect((await agent.run('My name is Ada.', { thread })).text).to.equal('Nice to meet you, Ada!');
    const state = await thread.serialize();
    expectClean(JSON.stringify(state), 'the serialized thread', secrets);
    expectClean(inspect(thread, { depth: 8, showHidden: true }), 'the thread object', secrets);
    const factory: unknown = id === 'redis' ? container.get(RedisChatMessageStoreFactory) : container.get(PostgresChatMessageStoreFactory);
    expectClean(inspect(factory, { depth: 8, showHidden: true }), 'the store factory object', secrets);

    const errors: unknown[] = [];
    emulator.injectFault({ kind: 'status', status: 500, ...CHAT } as Fault);
    errors.push(await rejection(agent.run('My name is Bob.', { thread })));
    // Two stale instances of the thread: the second append conflicts.
    const stale = [await agent.deserializeThread(state), await agent.deserializeThread(state)];
    const turnOf = (t: string): ChatMessage[] => [{ role: 'user', contents: [{ kind: 'text', text: t }] }];
    await stale[0]!.messageStore!.addMessages(turnOf('first'));
    const conflict = await rejection(stale[1]!.messageStore!.addMessages(turnOf('second')));
    expect(conflict).to.be.instanceOf(ThreadConflictError);
    errors.push(conflict);
    for (const plugin of [down, refused]) {
      const other = agentWith(id, plugin).agent;
      const error = await rejection(other.run('My name is Bob.', { thread: other.getNewThread() }));
      expect(error, inspect(error)).to.be.instanceOf(StoreError);
      errors.push(error);
    }
    for (const [i, error] of errors.entries()) {
      expect(error).to.be.instanceOf(SkeinError);
      expectClean(errorText(error), `error ${i} (${(error as Error).name})`, secrets);
    }
    expectClean(JSON.stringify(await thread.serialize()), 'the serialized thread after failures', secrets);
    expectClean(logged.join('\n'), 'console output', secrets);
  }

  withService('Redis (a private redis-server with --requirepass)', redisUp && redisServerInstalled(), 'install redis-server and start Redis', () => {
    let server: Awaited<ReturnType<typeof startPrivateRedis>>;
    before(async () => {
      server = await startPrivateRedis(PASSWORD);
    });
    after(() => server.stop());

    it('redis://:s3cr3t-xyz@...: the password works and appears in no thread, error, stack, cause or console output', async () => {
      const keyPrefix = `skein-test:${RUN_ID}:secret:`;
      const wrong = 'wr0ng-s3cr3t-abc';
      await searchEverything(
        'redis',
        redisStorePlugin({ url: server.url(PASSWORD), keyPrefix }),
        redisStorePlugin({ url: `redis://:${PASSWORD}@127.0.0.1:${await closedPort()}`, keyPrefix, connectTimeoutMs: 1000 }),
        redisStorePlugin({ url: server.url(wrong), keyPrefix }),
        [PASSWORD, wrong],
      );
    });
  });

  withService('PostgreSQL', postgresUp, 'start PostgreSQL on 127.0.0.1:5432 (database "test") or set DATABASE_URL', () => {
    const schema = `skein_${RUN_ID}_secret`;
    const withPassword = (change: (url: URL) => void = () => {}) => {
      const url = new URL(DATABASE_URL);
      url.password = PASSWORD;
      change(url);
      return url.toString();
    };
    after(() => dropSchema(schema));

    it('postgres://user:s3cr3t-xyz@...: the password appears in no thread, error, stack, cause or console output', async () => {
      // The local server trusts its clients, so it never asks for the password; a refused login
      // is shown with a role that does not exist.
      const migrate = new PostgresChatMessageStoreFactory({ connectionString: withPassword(), schema });
      await migrate.migrate();
      await migrate.close();
      const port = await closedPort();
      await searchEverything(
        'postgres',
        postgresStorePlugin({ connectionString: withPassword(), schema }),
        postgresStorePlugin({ connectionString: withPassword((u) => (u.port = String(port))), schema, connectTimeoutMs: 1000 }),
        postgresStorePlugin({ connectionString: withPassword((u) => (u.username = `nobody_${RUN_ID}`)), schema }),
        [PASSWORD],
      );
    });
  });
});
