/**
 * Connection failures of the durable stores against real servers (issue 4 part 8): a connection
 * dropped mid-append (before the request is sent / after the server wrote it but before the reply
 * arrived), wrong credentials, a server that is down or hung, a locked or crashed SQLite writer.
 * Each gives a typed StoreError without the password, leaves a whole turn or nothing, and a retry
 * from the old version never duplicates a turn.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import pg from 'pg';
import { type ChatMessage, type ChatMessageStore, type JsonObject, SerializationRegistryImpl, StoreError, ThreadConflictError, messageText } from 'skein';
import { PostgresChatMessageStoreFactory } from 'skein/store-postgres';
import { RedisChatMessageStoreFactory } from 'skein/store-redis';
import { SqliteChatMessageStoreFactory } from 'skein/store-sqlite';
import { type CutMode, FaultProxy, closedPort, postgresReplyDone, redisScriptReplyDone, silentServer } from './fault-proxy.js';
import { redisServerInstalled, startPrivateRedis } from './private-redis.js';
import { DATABASE_URL, REDIS_URL, RUN_ID, postgresAvailable, redisAvailable, tempDir, withService } from './services.js';
import { openRawSqlite } from './raw-sqlite.js';

const PASSWORD = 's3cr3t-xyz';
const redisUp = await redisAvailable();
const postgresUp = await postgresAvailable();
const CONTEXT = () => ({ path: '$.store', version: 1, registry: SerializationRegistryImpl.withDefaults() });
const CRASH_WORKER = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures', 'sqlite-crash-worker.js');

/** A turn of three messages tagged `tag`: a user input, a tool call with its result, an answer. */
export function turnOf(tag: string): ChatMessage[] {
  return [
    { role: 'user', contents: [{ kind: 'text', text: `${tag}:q` }] },
    { role: 'assistant', contents: [{ kind: 'function-call', callId: `c-${tag}`, name: 'lookup', arguments: `{"q":"${tag}"}` }] },
    { role: 'tool', contents: [{ kind: 'function-result', callId: `c-${tag}`, result: `${tag}:r` }] },
  ];
}

/** The texts a direct read shows for the turns `tags` (function calls read as ''). */
function textsOf(...tags: string[]): string[] {
  return tags.flatMap((t) => turnOf(t).map(messageText));
}

/** Everything an error exposes: message, stack, own properties (e.g. a driver's command args) and its causes, deeply. */
export function errorText(error: unknown): string {
  const parts = [inspect(error, { depth: 8, showHidden: true, getters: false })];
  for (let e: unknown = error, i = 0; e instanceof Error && i < 10; e = e.cause, i++) parts.push(e.message, e.stack ?? '', json(e));
  return parts.join('\n');
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return ''; // circular (e.g. ioredis' previousErrors); inspect above covers it
  }
}

function expectTypedAndClean(error: unknown, store: string, ...secrets: string[]): void {
  expect(error, inspect(error)).to.be.instanceOf(StoreError);
  expect((error as StoreError).store).to.equal(store);
  const text = errorText(error);
  for (const secret of [PASSWORD, ...secrets]) expect(text.includes(secret), `the error exposes "${secret}":\n${text}`).to.equal(false);
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected the store call to fail'),
    (error: unknown) => error,
  );
}

/**
 * The shared scenario: a thread with one landed turn; the proxy cuts the connection carrying the
 * next append; the result must be a StoreError, then (read directly) the first turn plus the
 * second whole (`after-reply`) or not at all (`before-forward`); a retry of the second turn from
 * the old version conflicts when it landed and lands once when it did not.
 */
async function dropMidAppend(options: {
  store: string;
  mode: CutMode;
  proxy: FaultProxy;
  thread: ChatMessageStore & { key: string };
  armCut: (key: string, mode: CutMode) => void;
  readDirect: (key: string) => Promise<string[]>;
}): Promise<void> {
  const { thread, proxy } = options;
  await thread.addMessages(turnOf('first'));
  const cutsBefore = proxy.cuts;
  options.armCut(thread.key, options.mode);
  const error = await failure(thread.addMessages(turnOf('second')));
  expect(proxy.cuts, 'the proxy cut the append').to.equal(cutsBefore + 1);
  expectTypedAndClean(error, options.store);
  expect((error as Error).message, 'the error says the outcome is unknown').to.match(/may or may not|may have/i);
  expect(JSON.stringify(await thread.serialize())).to.not.include(PASSWORD);

  const landed = options.mode === 'after-reply';
  expect(await options.readDirect(thread.key), 'history right after the cut').to.deep.equal(landed ? textsOf('first', 'second') : textsOf('first'));

  // The documented policy for an unknown outcome: retry from the version you had. It cannot duplicate.
  const retry = await thread.addMessages(turnOf('second')).then(
    () => 'landed',
    (e: unknown) => e,
  );
  if (landed) {
    expect(retry).to.be.instanceOf(ThreadConflictError);
    expect((retry as ThreadConflictError).expectedVersion).to.equal(3);
    expect((retry as ThreadConflictError).actualVersion).to.equal(6);
  } else {
    expect(retry).to.equal('landed');
  }
  expect(await options.readDirect(thread.key), 'history after the retry').to.deep.equal(textsOf('first', 'second'));
  // The same store instance goes on working after reading the thread again.
  await thread.listMessages();
  await thread.addMessages(turnOf('third'));
  expect(await options.readDirect(thread.key)).to.deep.equal(textsOf('first', 'second', 'third'));
}

const CUTS: [CutMode, string][] = [
  ['before-forward', 'before the append request reaches the server: StoreError, nothing written, the retry lands once'],
  ['after-reply', 'after the server wrote the turn, before the reply arrives: StoreError, the turn is there once, the retry conflicts'],
];

describe('Store failures: dropped connections, wrong credentials, servers down', function () {
  this.timeout(30_000);

  withService('Redis', redisUp, 'start Redis on 127.0.0.1:6379 or set REDIS_URL', () => {
    const prefix = `skein-test:${RUN_ID}:fail:`;
    const upstream = new URL(REDIS_URL);
    let admin: Redis;
    let proxy: FaultProxy;
    const factories: RedisChatMessageStoreFactory[] = [];
    const make = (url: string, extra: Partial<ConstructorParameters<typeof RedisChatMessageStoreFactory>[0]> = {}) => {
      const f = new RedisChatMessageStoreFactory({ url, keyPrefix: prefix, connectTimeoutMs: 1000, ...extra });
      factories.push(f);
      return f;
    };
    const readDirect = async (key: string) => (await admin.lrange(`${prefix}{${key}}:m`, 0, -1)).map((b) => messageText(JSON.parse(b) as ChatMessage));

    before(async () => {
      admin = new Redis(REDIS_URL);
      proxy = await FaultProxy.start(upstream.hostname, Number(upstream.port || 6379));
    });
    afterEach(async () => {
      for (const f of factories.splice(0)) await f.close();
    });
    after(async () => {
      await proxy.stop();
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length) await admin.del(...keys);
      await admin.quit();
    });

    for (const [mode, title] of CUTS) {
      it(`a connection cut ${title}`, async () => {
        const factory = make(`redis://127.0.0.1:${proxy.port}`);
        await dropMidAppend({
          store: 'redis',
          mode,
          proxy,
          thread: factory.create(),
          armCut: (key, m) =>
            proxy.cutNext({ mode: m, matches: (c) => /evalsha|eval/i.test(c) && c.includes(key), replyDone: redisScriptReplyDone }),
          readDirect,
        });
      });
    }

    it('a server that is down (closed port): StoreError without the password, nothing written', async () => {
      const port = await closedPort();
      const thread = make(`redis://:${PASSWORD}@127.0.0.1:${port}`).create();
      expectTypedAndClean(await failure(thread.addMessages(turnOf('lost'))), 'redis');
      expectTypedAndClean(await failure(thread.listMessages()), 'redis');
      expect(await readDirect(thread.key)).to.deep.equal([]);
    });

    it('a server that accepts but never answers: StoreError after the connect timeout, not a hang', async () => {
      const silent = await silentServer();
      try {
        const thread = make(`redis://:${PASSWORD}@127.0.0.1:${silent.port}`, { connectTimeoutMs: 300 }).create();
        expectTypedAndClean(await failure(thread.addMessages(turnOf('lost'))), 'redis');
      } finally {
        await silent.stop();
      }
    });

    describe('a private redis-server with --requirepass', () => {
      let server: Awaited<ReturnType<typeof startPrivateRedis>> | undefined;
      before(async function () {
        if (!redisServerInstalled()) {
          if (process.env.SKEIN_REQUIRE_SERVICES === '1') throw new Error('redis-server is not installed (SKEIN_REQUIRE_SERVICES=1)');
          return this.skip();
        }
        server = await startPrivateRedis(PASSWORD);
      });
      after(async () => {
        await server?.stop();
      });

      it('the right password works; a wrong or missing one gives a StoreError naming neither password', async () => {
        const good = make(server!.url(PASSWORD)).create();
        await good.addMessages(turnOf('ok'));
        expect((await good.listMessages()).map(messageText)).to.deep.equal(textsOf('ok'));

        const wrongPassword = 'wr0ng-pass-abc';
        const wrong = make(server!.url(wrongPassword)).create();
        const error = await failure(wrong.addMessages(turnOf('lost')));
        expectTypedAndClean(error, 'redis', wrongPassword);
        expect((error as Error).message).to.match(/WRONGPASS|password|auth/i);
        expect(JSON.stringify(await wrong.serialize())).to.not.include(wrongPassword);

        const none = make(`redis://127.0.0.1:${server!.port}`).create();
        expectTypedAndClean(await failure(none.listMessages()), 'redis');

        // Nothing of the refused turns was written.
        const direct = new Redis(server!.url(PASSWORD));
        try {
          expect(await direct.exists(`${prefix}{${wrong.key}}:m`, `${prefix}{${wrong.key}}:v`)).to.equal(0);
        } finally {
          await direct.quit();
        }
      });

      it('a cut after the server wrote the turn, through a password-protected connection: StoreError without the password', async () => {
        const privateProxy = await FaultProxy.start('127.0.0.1', server!.port);
        const direct = new Redis(server!.url(PASSWORD));
        try {
          const factory = make(`redis://:${PASSWORD}@127.0.0.1:${privateProxy.port}`);
          await dropMidAppend({
            store: 'redis',
            mode: 'after-reply',
            proxy: privateProxy,
            thread: factory.create(),
            armCut: (key, m) => privateProxy.cutNext({ mode: m, matches: (c) => /evalsha|eval/i.test(c) && c.includes(key), replyDone: redisScriptReplyDone }),
            readDirect: async (key) => (await direct.lrange(`${prefix}{${key}}:m`, 0, -1)).map((b) => messageText(JSON.parse(b) as ChatMessage)),
          });
        } finally {
          await direct.quit();
          await privateProxy.stop();
        }
      });
    });
  });

  withService('PostgreSQL', postgresUp, 'start PostgreSQL on 127.0.0.1:5432 (database "test") or set DATABASE_URL', () => {
    const schema = `skein_${RUN_ID}_fail`;
    const upstream = new URL(DATABASE_URL);
    let admin: pg.Client;
    let proxy: FaultProxy;
    const factories: PostgresChatMessageStoreFactory[] = [];
    /** The server's URL with `password` set (the local server trusts; the password is still handed to the driver). */
    const urlVia = (port: number, password = PASSWORD, database = upstream.pathname) => {
      const url = new URL(DATABASE_URL);
      url.port = String(port);
      url.password = password;
      url.pathname = database;
      return url.toString();
    };
    const make = (connectionString: string, extra: Partial<ConstructorParameters<typeof PostgresChatMessageStoreFactory>[0]> = {}) => {
      const f = new PostgresChatMessageStoreFactory({ connectionString, schema, connectTimeoutMs: 1000, ...extra });
      factories.push(f);
      return f;
    };
    const readDirect = async (key: string) =>
      (await admin.query<{ body: string }>(`SELECT body FROM "${schema}".skein_messages WHERE thread_key = $1 ORDER BY seq`, [key])).rows.map((r) =>
        messageText(JSON.parse(r.body) as ChatMessage),
      );

    before(async () => {
      admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      proxy = await FaultProxy.start(upstream.hostname, Number(upstream.port || 5432));
      await make(DATABASE_URL).migrate();
    });
    afterEach(async () => {
      for (const f of factories.splice(0)) await f.close();
    });
    after(async () => {
      await proxy.stop();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });

    for (const [mode, title] of CUTS) {
      it(`a connection cut ${title}`, async () => {
        const factory = make(urlVia(proxy.port));
        await dropMidAppend({
          store: 'postgres',
          mode,
          proxy,
          thread: factory.create(),
          armCut: (key, m) => proxy.cutNext({ mode: m, matches: (c) => c.includes('WITH ins AS'), replyDone: postgresReplyDone }),
          readDirect,
        });
      });
    }

    it('a server that is down (closed port): StoreError without the password, nothing written', async () => {
      const thread = make(urlVia(await closedPort())).create();
      expectTypedAndClean(await failure(thread.addMessages(turnOf('lost'))), 'postgres');
      expectTypedAndClean(await failure(thread.listMessages()), 'postgres');
      expect(await readDirect(thread.key)).to.deep.equal([]);
    });

    it('a server that accepts but never answers: StoreError after the connect timeout, not a hang', async () => {
      const silent = await silentServer();
      try {
        const thread = make(urlVia(silent.port), { connectTimeoutMs: 300 }).create();
        expectTypedAndClean(await failure(thread.addMessages(turnOf('lost'))), 'postgres');
      } finally {
        await silent.stop();
      }
    });

    it('a role that does not exist: StoreError naming the role, not the password', async () => {
      const url = new URL(urlVia(Number(upstream.port || 5432)));
      url.username = `nobody_${RUN_ID}`;
      const thread = make(url.toString()).create();
      const error = await failure(thread.addMessages(turnOf('lost')));
      expectTypedAndClean(error, 'postgres');
      expect((error as Error).message).to.include(`nobody_${RUN_ID}`).and.include('***');
      expect(JSON.stringify(await thread.serialize())).to.not.include(PASSWORD);
    });

    it('a database that does not exist: StoreError naming the database, not the password', async () => {
      const thread = make(urlVia(Number(upstream.port || 5432), PASSWORD, `/nodb_${RUN_ID}`)).create();
      const error = await failure(thread.listMessages());
      expectTypedAndClean(error, 'postgres');
      expect((error as Error).message).to.include(`nodb_${RUN_ID}`);
    });
  });

  describe('SQLite', () => {
    let dir: ReturnType<typeof tempDir>;
    let path: string;
    const factories: SqliteChatMessageStoreFactory[] = [];
    const make = (extra: Partial<ConstructorParameters<typeof SqliteChatMessageStoreFactory>[0]> = {}) => {
      const f = new SqliteChatMessageStoreFactory({ path, ...extra });
      factories.push(f);
      return f;
    };
    const readDirect = (key: string) => {
      const db = openRawSqlite(path, { readonly: true });
      try {
        return db
          .all<{ body: string }>('SELECT body FROM skein_messages WHERE thread_key = ? ORDER BY seq', key)
          .map((r) => messageText(JSON.parse(r.body) as ChatMessage));
      } finally {
        db.close();
      }
    };

    beforeEach(() => {
      dir = tempDir();
      path = join(dir.path, 'threads.db');
    });
    afterEach(() => {
      for (const f of factories.splice(0)) f.close();
      dir.remove();
    });

    it('a database locked by another writer past busyTimeoutMs: StoreError, nothing written, the retry lands once', async () => {
      const thread = make({ busyTimeoutMs: 20 }).create();
      await thread.addMessages(turnOf('first'));
      const other = openRawSqlite(path);
      try {
        other.exec('BEGIN IMMEDIATE');
        const error = await failure(thread.addMessages(turnOf('second')));
        expectTypedAndClean(error, 'sqlite');
        expect((error as Error).message).to.match(/locked|busy/i);
        other.exec('ROLLBACK');
      } finally {
        other.close();
      }
      expect(readDirect(thread.key)).to.deep.equal(textsOf('first'));
      await thread.addMessages(turnOf('second'));
      expect(readDirect(thread.key)).to.deep.equal(textsOf('first', 'second'));
    });

    it('a process killed in the middle of its append transaction leaves nothing of that turn; the retry from the old version lands once', async () => {
      const factory = make();
      const thread = factory.create();
      await thread.addMessages(turnOf('first'));
      const state = await thread.serialize();
      const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [CRASH_WORKER, JSON.stringify({ path, state, tag: 'second' })], { stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
      });
      expect(exit.signal, `the worker died mid-transaction (${exit.stderr})`).to.equal('SIGKILL');
      expect(readDirect(thread.key)).to.deep.equal(textsOf('first'));
      // Another instance restored from the same state (version 3) appends the turn once.
      const restored = await make().restore(state as JsonObject, CONTEXT());
      await restored.addMessages(turnOf('second'));
      expect(readDirect(thread.key)).to.deep.equal(textsOf('first', 'second'));
    });
  });
});
