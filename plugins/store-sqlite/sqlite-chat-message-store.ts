import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  type ChatMessage,
  type ChatMessageStore,
  type ChatMessageStoreFactory,
  type ChatReducer,
  type JsonObject,
  type ListMessagesOptions,
  SerializationError,
  type SerializationRegistry,
  SkeinError,
  type StoreRestoreContext,
  ConfigurationError,
  StoreError,
  defaultSerializationRegistry,
  checkRetentionOptions,
  readStoreKey,
  storeConflictError,
} from 'skein';
import { type SqliteConnection, type SqliteDriverName, type SqliteDriverOption, type SqliteStatement, isSqliteBusy, openSqlite, resolveSqliteDriver } from './sqlite-driver.js';

export const SQLITE_STORE_ID = 'sqlite';

/**
 * What a committed append survives (`PRAGMA synchronous` of every connection, in WAL mode):
 * - `full` (default): SQLite syncs the WAL to disk at each commit, so an acknowledged turn
 *   survives a process crash, an OS crash and a power loss.
 * - `normal`: SQLite syncs only at checkpoints; an acknowledged turn survives a process crash,
 *   but an OS crash or power loss can roll back the last turns (the file stays consistent).
 */
export type SqliteDurability = 'full' | 'normal';

const SYNCHRONOUS: Readonly<Record<SqliteDurability, number>> = { normal: 1, full: 2 };

export interface SqliteStoreOptions {
  /** The database file (its folder is created), or `:memory:` for a database that lives with the process. */
  path: string;
  /** Keep only the newest N messages of each thread (older ones are deleted on append). */
  maxMessages?: number;
  /** Threads not written for this long are deleted by `prune()`. */
  ttlSeconds?: number;
  /** Applied to every history read (`listMessages`); the stored messages are unchanged. */
  reducer?: ChatReducer;
  /** How long a writer waits for another process's write lock, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /** Validates messages read back; by default the container's registry (or the core kinds). */
  serializationRegistry?: SerializationRegistry;
  /** What an acknowledged turn survives: `full` (default: power loss too) or `normal` (faster; see SqliteDurability). */
  durability?: SqliteDurability;
  /** `auto` (default): Node's built-in `node:sqlite` when present (Node >= 22.13), else `better-sqlite3`. */
  driver?: SqliteDriverOption;
}

const SCHEMA_VERSION = 1;

interface Statements {
  version: SqliteStatement<[string], { version: number }>;
  tail: SqliteStatement<[string, number], { seq: number; body: string }>;
  insert: SqliteStatement<[string, number, string]>;
  upsert: SqliteStatement<[string, number, number]>;
  trim: SqliteStatement<[string, number]>;
  deleteMessages: SqliteStatement<[string]>;
  deleteThread: SqliteStatement<[string]>;
}

/**
 * Makes SQLite-backed stores: one file holds every thread; a serialized thread holds only its
 * key. Appends are one IMMEDIATE transaction guarded by the thread's version, so several
 * processes may share the file (WAL mode), whichever driver each of them runs.
 *
 * @example
 * ```ts
 * const factory = new SqliteChatMessageStoreFactory({ path: './data/threads.db' });
 * factory.driver; // 'node:sqlite' on Node >= 22.13, else 'better-sqlite3'
 * const store = factory.create();
 * await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'Hi' }] }]);
 * factory.close();
 * ```
 */
export class SqliteChatMessageStoreFactory implements ChatMessageStoreFactory {
  readonly type = SQLITE_STORE_ID;
  readonly version = 1;
  readonly options: Readonly<SqliteStoreOptions>;
  /** The driver this factory runs on (chosen when it is made, from the `driver` option). */
  readonly driver: SqliteDriverName;
  /** The durability in effect (`PRAGMA synchronous` FULL or NORMAL on every connection). */
  readonly durability: SqliteDurability;
  serializationRegistry: SerializationRegistry;
  #db: SqliteConnection | undefined;
  #statements: Statements | undefined;

  constructor(options: SqliteStoreOptions) {
    if (typeof options?.path !== 'string' || options.path === '') {
      throw new StoreError(SQLITE_STORE_ID, 'sqliteStorePlugin / SqliteChatMessageStoreFactory needs a `path` (a file, or ":memory:").');
    }
    checkRetentionOptions(SQLITE_STORE_ID, options);
    const durability = options.durability ?? 'full';
    if (!Object.hasOwn(SYNCHRONOUS, durability)) {
      throw new ConfigurationError(`sqlite store: durability must be "full" or "normal", found ${JSON.stringify(durability)}.`);
    }
    this.durability = durability;
    this.driver = resolveSqliteDriver(options.driver ?? 'auto');
    this.options = { ...options };
    this.serializationRegistry = options.serializationRegistry ?? defaultSerializationRegistry();
  }

  create(): SqliteChatMessageStore {
    return new SqliteChatMessageStore(this, randomUUID(), 0);
  }

  restore(state: JsonObject, context: StoreRestoreContext): SqliteChatMessageStore {
    const key = readStoreKey(state, context.path);
    const store = new SqliteChatMessageStore(this, key, 0);
    store.seenVersion = this.run(() => this.statements.version.get(key)?.version ?? 0);
    return store;
  }

  /** Deletes threads not written for `ttlSeconds` (as of `now`); returns how many. No-op without a TTL. */
  async prune(now: Date = new Date()): Promise<number> {
    const ttl = this.options.ttlSeconds;
    if (ttl === undefined) return 0;
    const cutoff = now.getTime() - ttl * 1000;
    return this.run(() =>
      this.transaction('IMMEDIATE', (db) => {
        db.prepare('DELETE FROM skein_messages WHERE thread_key IN (SELECT key FROM skein_threads WHERE updated_at < ?)').run(cutoff);
        return Number(db.prepare('DELETE FROM skein_threads WHERE updated_at < ?').run(cutoff).changes);
      }),
    );
  }

  close(): void {
    this.#db?.close();
    this.#db = undefined;
    this.#statements = undefined;
  }

  /** @internal */
  get db(): SqliteConnection {
    if (this.#db) return this.#db;
    const path = this.options.path;
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const db = openSqlite(this.driver, path);
    try {
      db.exec(`PRAGMA busy_timeout = ${Math.floor(this.options.busyTimeoutMs ?? 5000)}`);
      if (path !== ':memory:') enableWal(db);
      // Per connection; a driver's compiled-in default is no promise (SQLite builds may set NORMAL), so always say.
      db.exec(`PRAGMA synchronous = ${SYNCHRONOUS[this.durability]}`);
      db.exec(`
        CREATE TABLE IF NOT EXISTS skein_threads (key TEXT PRIMARY KEY, version INTEGER NOT NULL, updated_at INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS skein_messages (thread_key TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (thread_key, seq)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS skein_threads_updated ON skein_threads (updated_at);
      `);
      const found = Number(pragma(db, 'user_version'));
      if (found > SCHEMA_VERSION) {
        throw new StoreError(SQLITE_STORE_ID, `The SQLite file was written by a newer skein (schema ${found}; this build knows ${SCHEMA_VERSION}). Upgrade skein.`);
      }
      if (found < SCHEMA_VERSION) db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    } catch (error) {
      db.close();
      throw error;
    }
    this.#db = db;
    return db;
  }

  /** @internal */
  get statements(): Statements {
    if (this.#statements) return this.#statements;
    const db = this.db;
    this.#statements = {
      version: db.prepare('SELECT version FROM skein_threads WHERE key = ?'),
      tail: db.prepare('SELECT seq, body FROM skein_messages WHERE thread_key = ? ORDER BY seq DESC LIMIT ?'),
      insert: db.prepare('INSERT INTO skein_messages (thread_key, seq, body) VALUES (?, ?, ?)'),
      upsert: db.prepare(
        'INSERT INTO skein_threads (key, version, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at',
      ),
      trim: db.prepare('DELETE FROM skein_messages WHERE thread_key = ? AND seq <= ?'),
      deleteMessages: db.prepare('DELETE FROM skein_messages WHERE thread_key = ?'),
      deleteThread: db.prepare('DELETE FROM skein_threads WHERE key = ?'),
    };
    return this.#statements;
  }

  /** The value of `PRAGMA <name>` on this factory's connection (e.g. `synchronous`: 2 is FULL, 1 NORMAL). */
  pragma(name: 'synchronous' | 'journal_mode' | 'busy_timeout' | 'user_version'): unknown {
    return this.run(() => pragma(this.db, name));
  }

  /**
   * @internal One transaction around `fn`: `IMMEDIATE` takes the write lock up front (so a
   * version check and its write see the same state), `DEFERRED` is a consistent read.
   */
  transaction<T>(mode: 'IMMEDIATE' | 'DEFERRED', fn: (db: SqliteConnection) => T): T {
    const db = this.db;
    db.exec(`BEGIN ${mode}`);
    try {
      const result = fn(db);
      db.exec('COMMIT');
      return result;
    } catch (error) {
      try {
        db.exec('ROLLBACK');
      } catch {
        // SQLite may have rolled back already (e.g. after SQLITE_FULL); the first error is the one to report.
      }
      throw error;
    }
  }

  /** @internal Runs a database call, turning driver failures into StoreError. */
  run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof SkeinError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new StoreError(SQLITE_STORE_ID, `SQLite store at "${this.options.path}" failed: ${message}`, { cause: error });
    }
  }
}

/** One thread's history in SQLite. Remembers the version it last saw to guard its appends. */
export class SqliteChatMessageStore implements ChatMessageStore {
  readonly type = SQLITE_STORE_ID;
  /** @internal The thread version (messages ever appended) this instance last read or wrote. */
  seenVersion: number;

  constructor(
    private readonly factory: SqliteChatMessageStoreFactory,
    readonly key: string,
    version: number,
  ) {
    this.seenVersion = version;
  }

  async listMessages(options: ListMessagesOptions = {}): Promise<ChatMessage[]> {
    const limit = options.last === undefined ? -1 : Math.max(0, Math.floor(options.last));
    if (limit === 0) {
      this.seenVersion = this.factory.run(() => this.factory.statements.version.get(this.key)?.version ?? 0);
      return [];
    }
    const { rows, version } = this.factory.run(() => {
      const s = this.factory.statements;
      // One read transaction, so the version and the messages are of the same moment.
      return this.factory.transaction('DEFERRED', () => ({ version: s.version.get(this.key)?.version ?? 0, rows: s.tail.all(this.key, limit) }));
    });
    this.seenVersion = version;
    const messages = rows.reverse().map((row) => this.#read(row.body, row.seq));
    return this.factory.options.reducer ? this.factory.options.reducer.reduce(messages) : messages;
  }

  async addMessages(messages: readonly ChatMessage[]): Promise<void> {
    if (messages.length === 0) return;
    // Serialize first: a message that cannot be stored fails the turn before anything is written.
    const bodies = messages.map((m) => JSON.stringify(m));
    const expected = this.seenVersion;
    const next = expected + bodies.length;
    const max = this.factory.options.maxMessages;
    this.factory.run(() => {
      const s = this.factory.statements;
      this.factory.transaction('IMMEDIATE', () => {
        const actual = s.version.get(this.key)?.version ?? 0;
        if (actual !== expected) throw storeConflictError(this.key, expected, actual);
        bodies.forEach((body, i) => {
          if (max === undefined || expected + i + 1 > next - max) s.insert.run(this.key, expected + i + 1, body);
        });
        s.upsert.run(this.key, next, Date.now());
        if (max !== undefined) s.trim.run(this.key, next - max);
      });
    });
    this.seenVersion = next;
  }

  async serialize(): Promise<JsonObject> {
    return { key: this.key };
  }

  /** A new thread (a new key) with a copy of the first `count` messages, in one transaction; this one is unchanged. */
  async fork(count: number): Promise<SqliteChatMessageStore> {
    const key = randomUUID();
    const limit = Math.max(0, Math.floor(count));
    const copied = limit === 0 ? 0 : this.factory.run(() =>
      this.factory.transaction('IMMEDIATE', (db) => {
        const changes = Number(
          db.prepare('INSERT INTO skein_messages (thread_key, seq, body) SELECT ?, ROW_NUMBER() OVER (ORDER BY seq), body FROM skein_messages WHERE thread_key = ? ORDER BY seq LIMIT ?')
            .run(key, this.key, limit).changes,
        );
        if (changes > 0) this.factory.statements.upsert.run(key, changes, Date.now());
        return changes;
      }),
    );
    return new SqliteChatMessageStore(this.factory, key, copied);
  }

  async clear(): Promise<void> {
    this.factory.run(() => {
      const s = this.factory.statements;
      this.factory.transaction('IMMEDIATE', () => {
        s.deleteMessages.run(this.key);
        s.deleteThread.run(this.key);
      });
    });
    this.seenVersion = 0;
  }

  #read(body: string, seq: number): ChatMessage {
    const path = `sqlite:${this.key}#${seq}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (error) {
      throw new SerializationError(path, 'stored message is not valid JSON; the database was changed outside skein.', { cause: error });
    }
    return this.factory.serializationRegistry.readMessage(parsed, path);
  }
}

/**
 * WAL is a property of the file, so only the first opener switches it; the switch needs a lock
 * SQLite's busy handler does not wait for, so a process that races another one retries briefly.
 */
function enableWal(db: SqliteConnection): void {
  for (let attempt = 0; ; attempt++) {
    if (String(pragma(db, 'journal_mode')).toLowerCase() === 'wal') return;
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (error) {
      if (!isSqliteBusy(error) || attempt >= 100) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

/** The first column of `PRAGMA <name>` (both drivers return one row for a read pragma). */
function pragma(db: SqliteConnection, name: string): unknown {
  const row = db.prepare<[], Record<string, unknown>>(`PRAGMA ${name}`).get();
  return row === undefined ? undefined : Object.values(row)[0];
}
