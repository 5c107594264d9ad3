import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  type AppendOutcome,
  ConfigurationError,
  type JsonObject,
  readStoreKey,
  SkeinError,
  type StoredTail,
  StoreError,
  type StoreRestoreContext,
  VersionedChatMessageStore,
  VersionedStoreFactory,
  type VersionedStoreOptions,
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

export interface SqliteStoreOptions extends VersionedStoreOptions {
  /** The database file (its folder is created), or `:memory:` for a database that lives with the process. */
  path: string;
  /** Keep only the newest N messages of each thread (older ones are deleted on append). */
  maxMessages?: number;
  /** Threads not written for this long are deleted by `prune()`. */
  ttlSeconds?: number;
  /** How long a writer waits for another process's write lock, in ms. Default 5000. */
  busyTimeoutMs?: number;
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
export class SqliteChatMessageStoreFactory extends VersionedStoreFactory<SqliteChatMessageStore, SqliteStoreOptions> {
  readonly type = SQLITE_STORE_ID;
  /** The driver this factory runs on (chosen when it is made, from the `driver` option). */
  readonly driver: SqliteDriverName;
  /** The durability in effect (`PRAGMA synchronous` FULL or NORMAL on every connection). */
  readonly durability: SqliteDurability;
  #db: SqliteConnection | undefined;
  #statements: Statements | undefined;

  constructor(options: SqliteStoreOptions) {
    if (typeof options?.path !== 'string' || options.path === '') {
      throw new StoreError(SQLITE_STORE_ID, 'sqliteStorePlugin / SqliteChatMessageStoreFactory needs a `path` (a file, or ":memory:").');
    }
    super(SQLITE_STORE_ID, options);
    const durability = options.durability ?? 'full';
    if (!Object.hasOwn(SYNCHRONOUS, durability)) {
      throw new ConfigurationError(`sqlite store: durability must be "full" or "normal", found ${JSON.stringify(durability)}.`);
    }
    this.durability = durability;
    this.driver = resolveSqliteDriver(options.driver ?? 'auto');
  }

  restore(state: JsonObject, context: StoreRestoreContext): SqliteChatMessageStore {
    const key = readStoreKey(state, context.path);
    return this.storeFor(key, this.run(() => this.statements.version.get(key)?.version ?? 0));
  }

  /** @internal */
  storeFor(key: string, version: number): SqliteChatMessageStore {
    return new SqliteChatMessageStore(this, key, version);
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

/** One thread's history in SQLite: the statements of a version-checked store. */
export class SqliteChatMessageStore extends VersionedChatMessageStore<SqliteChatMessageStore, SqliteChatMessageStoreFactory> {
  readonly type = SQLITE_STORE_ID;

  protected async readTail(last: number | undefined): Promise<StoredTail> {
    if (last === 0) return { version: this.factory.run(() => this.factory.statements.version.get(this.key)?.version ?? 0), rows: [] };
    const { rows, version } = this.factory.run(() => {
      const s = this.factory.statements;
      // One read transaction, so the version and the messages are of the same moment.
      return this.factory.transaction('DEFERRED', () => ({ version: s.version.get(this.key)?.version ?? 0, rows: s.tail.all(this.key, last ?? -1) }));
    });
    return { version, rows: rows.reverse().map((row) => ({ body: row.body, at: `#${row.seq}` })) };
  }

  protected async appendBodies(bodies: readonly string[], expected: number): Promise<AppendOutcome> {
    const next = expected + bodies.length;
    const max = this.factory.options.maxMessages;
    return this.factory.run(() => {
      const s = this.factory.statements;
      return this.factory.transaction('IMMEDIATE', () => {
        const actual = s.version.get(this.key)?.version ?? 0;
        if (actual !== expected) return { appended: false, version: actual };
        bodies.forEach((body, i) => {
          if (max === undefined || expected + i + 1 > next - max) s.insert.run(this.key, expected + i + 1, body);
        });
        s.upsert.run(this.key, next, Date.now());
        if (max !== undefined) s.trim.run(this.key, next - max);
        return { appended: true, version: next };
      });
    });
  }

  protected async copyFirst(count: number, to: string): Promise<number> {
    return this.factory.run(() =>
      this.factory.transaction('IMMEDIATE', (db) => {
        const changes = Number(
          db.prepare('INSERT INTO skein_messages (thread_key, seq, body) SELECT ?, ROW_NUMBER() OVER (ORDER BY seq), body FROM skein_messages WHERE thread_key = ? ORDER BY seq LIMIT ?')
            .run(to, this.key, count).changes,
        );
        if (changes > 0) this.factory.statements.upsert.run(to, changes, Date.now());
        return changes;
      }),
    );
  }

  protected async deleteThread(): Promise<void> {
    this.factory.run(() => {
      const s = this.factory.statements;
      this.factory.transaction('IMMEDIATE', () => {
        s.deleteMessages.run(this.key);
        s.deleteThread.run(this.key);
      });
    });
  }

  protected open(key: string, version: number): SqliteChatMessageStore {
    return new SqliteChatMessageStore(this.factory, key, version);
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
