import type { Pool } from 'pg';
import { pg } from './postgres-peers.js';
import {
  type AppendOutcome,
  type JsonObject,
  readStoreKey,
  redactUrl,
  ServerStoreFactory,
  type ServerStoreOptions,
  SkeinError,
  type StoreDurabilityReport,
  type StoredTail,
  StoreError,
  type StoreRestoreContext,
  UNKNOWN_APPEND_OUTCOME,
  VersionedChatMessageStore,
} from 'skein';

export const POSTGRES_STORE_ID = 'postgres';

/**
 * What the store needs of a pool: a `pg.Pool` is one. Declared here so an app type-checks these
 * declarations without `@types/pg` (pg ships no types of its own).
 */
export interface PostgresPool {
  query<R extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<PostgresQueryResult<R>>;
  connect(): Promise<PostgresPoolClient>;
}

/** A client checked out of a {@link PostgresPool} (a `pg.PoolClient`). */
export interface PostgresPoolClient {
  query<R extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<PostgresQueryResult<R>>;
  release(): void;
}

/** The part of a `pg` query result the store reads. */
export interface PostgresQueryResult<R> {
  rows: R[];
  rowCount: number | null;
}

export interface PostgresStoreOptions extends ServerStoreOptions {
  /** `postgres://user[:password]@host:port/db`. The password never appears in state or errors. */
  connectionString?: string;
  /** Use this pool instead of making one (the caller ends it). */
  pool?: PostgresPool;
  /** The schema holding skein's tables (created by `migrate()`). Default `skein`. */
  schema?: string;
  /** Threads not written for this long are deleted by `prune()`. */
  ttlSeconds?: number;
  /** Pool size. Default 10. */
  maxConnections?: number;
  /** Connect timeout in ms. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * Read the server's durability settings (`synchronous_commit`, `fsync`, `full_page_writes`, as
   * the store's session sees them) after the first successful call and warn once when
   * acknowledged turns could be lost on a server crash or power loss. Default true.
   */
  durabilityCheck?: boolean;
}

export interface MigrationResult {
  /** Schema version found before (0: none). */
  from: number;
  /** Schema version now. */
  to: number;
}

const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** Versioned, append-only migrations; `migrate()` applies the ones a database lacks. */
const MIGRATIONS: readonly ((s: string) => string)[] = [
  (s) => `
    CREATE TABLE ${s}.skein_threads (
      key text PRIMARY KEY,
      version bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX skein_threads_updated_at ON ${s}.skein_threads (updated_at);
    CREATE TABLE ${s}.skein_messages (
      thread_key text NOT NULL REFERENCES ${s}.skein_threads (key) ON DELETE CASCADE,
      seq bigint NOT NULL,
      body text NOT NULL,
      PRIMARY KEY (thread_key, seq)
    );`,
];

export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Makes PostgreSQL-backed stores: a thread row holds the version, a message row per message; a
 * serialized thread holds only its key. Call `migrate()` once (it is idempotent) before use.
 * After its first successful call it checks the session's durability settings and warns once
 * through `logger` when acknowledged turns could be lost (`durabilityCheck: false` turns that off).
 *
 * @example
 * ```ts
 * const factory = new PostgresChatMessageStoreFactory({ connectionString: process.env.DATABASE_URL, schema: 'skein' });
 * await factory.migrate();
 * const store = factory.create();
 * await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'Hi' }] }]);
 * await factory.close();
 * ```
 */
export class PostgresChatMessageStoreFactory extends ServerStoreFactory<PostgresChatMessageStore, PostgresStoreOptions> {
  readonly type = POSTGRES_STORE_ID;
  readonly schema: string;
  readonly #connectionString: string;
  #pool: Pool | undefined;

  constructor(options: PostgresStoreOptions = {}) {
    const schema = options.schema ?? 'skein';
    if (!SCHEMA_PATTERN.test(schema)) {
      throw new StoreError(POSTGRES_STORE_ID, `schema must be a lower-case SQL identifier (letters, digits, "_"), found "${schema}".`);
    }
    // `options` is public and easily logged: keep the address, never the password.
    super(POSTGRES_STORE_ID, options, {
      ...options,
      ...(options.connectionString === undefined ? {} : { connectionString: redactUrl(options.connectionString, '(unparseable connection string)') }),
    });
    this.schema = schema;
    this.#connectionString = options.connectionString ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  }

  /** The server address with any password masked: safe for logs and messages. */
  get redactedConnectionString(): string {
    return redactUrl(this.#connectionString, '(unparseable connection string)');
  }

  /**
   * Reads the durability settings a session of this store sees (server, database and role
   * settings, and `options` in the connection) and says what an acknowledged turn is exposed to.
   * The store runs this once by itself unless `durabilityCheck: false`.
   */
  async checkDurability(): Promise<StoreDurabilityReport> {
    const row = await this.#call(async (pool) => {
      const { rows } = await pool.query<Record<string, string>>(
        `SELECT ${DURABILITY_SETTINGS.map((name) => `current_setting('${name}') AS ${name}`).join(', ')}`,
      );
      return rows[0] ?? {};
    });
    const settings = Object.fromEntries(DURABILITY_SETTINGS.map((name) => [name, String(row[name] ?? '')]));
    return { settings, warning: postgresDurabilityWarning(this.redactedConnectionString, settings) };
  }

  /**
   * Creates or upgrades skein's schema to this build's version. Idempotent and safe to call from
   * several processes at once (an advisory lock serializes them).
   */
  async migrate(): Promise<MigrationResult> {
    const s = `"${this.schema}"`;
    return this.run(async (pool) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`skein-migrate:${this.schema}`]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${s}.skein_schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
        const found = Number((await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${s}.skein_schema_version`)).rows[0]?.v ?? 0);
        if (found > MIGRATIONS.length) {
          throw new StoreError(POSTGRES_STORE_ID, `Schema "${this.schema}" is at version ${found}, newer than this build knows (${MIGRATIONS.length}). Upgrade skein.`);
        }
        for (let v = found + 1; v <= MIGRATIONS.length; v++) {
          await client.query(MIGRATIONS[v - 1]!(s));
          await client.query(`INSERT INTO ${s}.skein_schema_version (version) VALUES ($1)`, [v]);
        }
        await client.query('COMMIT');
        return { from: found, to: MIGRATIONS.length };
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    });
  }

  async restore(state: JsonObject, context: StoreRestoreContext): Promise<PostgresChatMessageStore> {
    const key = readStoreKey(state, context.path);
    const version = await this.run(async (pool) => {
      const { rows } = await pool.query<{ version: string }>(`SELECT version FROM "${this.schema}".skein_threads WHERE key = $1`, [key]);
      return Number(rows[0]?.version ?? 0);
    });
    return this.storeFor(key, version);
  }

  /** @internal */
  storeFor(key: string, version: number): PostgresChatMessageStore {
    return new PostgresChatMessageStore(this, key, version);
  }

  /** Deletes threads (and their messages) not written for `ttlSeconds` as of `now`; returns how many. No-op without a TTL. */
  async prune(now: Date = new Date()): Promise<number> {
    const ttl = this.options.ttlSeconds;
    if (ttl === undefined) return 0;
    const cutoff = new Date(now.getTime() - ttl * 1000);
    return this.run(async (pool) => (await pool.query(`DELETE FROM "${this.schema}".skein_threads WHERE updated_at < $1`, [cutoff])).rowCount ?? 0);
  }

  /** Ends the pool this factory made (not one it was given). */
  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    if (pool && !this.options.pool) await pool.end();
  }

  /**
   * @internal Runs queries on the (lazily made) pool, turning failures into StoreError.
   * `write`: the call appends a turn, so a failure whose outcome is unknown says so.
   */
  async run<T>(fn: (pool: PostgresPool) => Promise<T>, write = false): Promise<T> {
    return this.afterSuccess(await this.#call(fn, write));
  }

  async #call<T>(fn: (pool: PostgresPool) => Promise<T>, write = false): Promise<T> {
    try {
      return await fn(this.#poolOrNew());
    } catch (error) {
      if (error instanceof SkeinError) throw error;
      const raw = error instanceof Error ? error.message : String(error);
      const code = (error as { code?: string }).code;
      const hint =
        code === '42P01' || code === '3F000'
          ? ` Run \`await factory.migrate()\` (or \`container.get(PostgresChatMessageStoreFactory).migrate()\`) to create schema "${this.schema}".`
          : code === '28P01' || code === '28000'
            ? ' Check the user and password in the connection string.'
            : '';
      // A server-reported error (SQLSTATE) rolled the statement back; a refused connection sent nothing.
      const unknown = write && !(typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) && code !== 'ECONNREFUSED' && code !== 'ENOTFOUND' && !/timeout exceeded when trying to connect/i.test(raw);
      throw this.storeFailure(error, { server: `PostgreSQL store at ${this.redactedConnectionString}`, secret: this.#connectionString, hint: `.${hint}`, outcomeUnknown: unknown });
    }
  }

  #poolOrNew(): PostgresPool {
    if (this.options.pool) return this.options.pool;
    if (!this.#pool) {
      this.#pool = new pg.Pool({
        connectionString: this.#connectionString,
        max: this.options.maxConnections ?? 10,
        connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000,
      });
      // An idle connection dropped by the server must not crash the process; the next query reconnects.
      this.#pool.on('error', () => {});
    }
    return this.#pool;
  }
}

/** One thread's history in PostgreSQL: the statements of a version-checked store. */
export class PostgresChatMessageStore extends VersionedChatMessageStore<PostgresChatMessageStore, PostgresChatMessageStoreFactory> {
  readonly type = POSTGRES_STORE_ID;

  protected async readTail(last: number | undefined): Promise<StoredTail> {
    const s = `"${this.factory.schema}"`;
    // One statement: the version and the messages come from one snapshot.
    const rows = await this.factory.run(async (pool) =>
      (
        await pool.query<{ version: string; seq: string | null; body: string | null }>(
          `SELECT t.version, m.seq, m.body FROM ${s}.skein_threads t
           LEFT JOIN LATERAL (SELECT seq, body FROM ${s}.skein_messages WHERE thread_key = t.key ORDER BY seq DESC LIMIT $2) m ON true
           WHERE t.key = $1 ORDER BY m.seq`,
          [this.key, last ?? null],
        )
      ).rows,
    );
    return {
      version: Number(rows[0]?.version ?? 0),
      rows: rows.filter((r) => r.body !== null).map((r) => ({ body: r.body!, at: `#${r.seq!}` })),
    };
  }

  protected async appendBodies(bodies: readonly string[], expected: number): Promise<AppendOutcome> {
    const s = `"${this.factory.schema}"`;
    // One statement, so one round trip and one transaction: bump the version only if it is the
    // one this instance saw, insert the turn after it, trim. A lost race changes nothing.
    const rows = await this.factory.run(async (pool) =>
      (
        await pool.query<{ version: string }>(
          `WITH ins AS (
             INSERT INTO ${s}.skein_threads (key, version, updated_at)
             SELECT $1, $3::bigint, now() WHERE $2::bigint = 0
             ON CONFLICT (key) DO NOTHING RETURNING version
           ), upd AS (
             UPDATE ${s}.skein_threads SET version = version + $3::bigint, updated_at = now()
             WHERE key = $1 AND version = $2::bigint AND $2::bigint <> 0 RETURNING version
           ), bumped AS (SELECT version FROM ins UNION ALL SELECT version FROM upd),
           msgs AS (
             INSERT INTO ${s}.skein_messages (thread_key, seq, body)
             SELECT $1, $2::bigint + b.ord, b.body FROM bumped, unnest($4::text[]) WITH ORDINALITY AS b(body, ord)
             WHERE $5::bigint = 0 OR $2::bigint + b.ord > bumped.version - $5::bigint
             RETURNING 1
           ), trimmed AS (
             DELETE FROM ${s}.skein_messages
             WHERE $5::bigint > 0 AND thread_key = $1 AND seq <= (SELECT version FROM bumped) - $5::bigint
             RETURNING 1
           )
           SELECT version FROM bumped`,
          [this.key, expected, bodies.length, bodies, this.factory.options.maxMessages ?? 0],
        )
      ).rows,
      true,
    );
    if (rows.length > 0) return { appended: true, version: Number(rows[0]!.version) };
    const actual = await this.factory.run(async (pool) => {
      const found = await pool.query<{ version: string }>(`SELECT version FROM ${s}.skein_threads WHERE key = $1`, [this.key]);
      return Number(found.rows[0]?.version ?? 0);
    });
    return { appended: false, version: actual };
  }

  protected async copyFirst(count: number, to: string): Promise<number> {
    const s = `"${this.factory.schema}"`;
    const rows = await this.factory.run(async (pool) =>
      (
        await pool.query<{ version: string }>(
          `WITH src AS (
             SELECT body, row_number() OVER (ORDER BY seq) AS ord FROM ${s}.skein_messages WHERE thread_key = $1 ORDER BY seq LIMIT $3
           ), thread AS (
             INSERT INTO ${s}.skein_threads (key, version, updated_at)
             SELECT $2, n, now() FROM (SELECT count(*) AS n FROM src) c WHERE n > 0 RETURNING version
           ), msgs AS (
             INSERT INTO ${s}.skein_messages (thread_key, seq, body) SELECT $2, src.ord, src.body FROM src, thread RETURNING 1
           )
           SELECT version FROM thread`,
          [this.key, to, count],
        )
      ).rows,
    );
    return Number(rows[0]?.version ?? 0);
  }

  protected async deleteThread(): Promise<void> {
    await this.factory.run((pool) => pool.query(`DELETE FROM "${this.factory.schema}".skein_threads WHERE key = $1`, [this.key]));
  }

  protected open(key: string, version: number): PostgresChatMessageStore {
    return new PostgresChatMessageStore(this.factory, key, version);
  }
}

/** Said when an append failed after it may have reached the server. */
export const UNKNOWN_OUTCOME = UNKNOWN_APPEND_OUTCOME;

const DURABILITY_SETTINGS = ['synchronous_commit', 'fsync', 'full_page_writes'] as const;

/** What the settings expose an acknowledged turn to; undefined when nothing (commits flushed, pages protected). */
export function postgresDurabilityWarning(server: string, settings: Readonly<Record<string, string>>): string | undefined {
  const risks: string[] = [];
  const fixes: string[] = [];
  if (settings.synchronous_commit === 'off') {
    risks.push(
      'synchronous_commit is off, so a commit is acknowledged before it reaches disk and the turns acknowledged in the last moments (up to 3 × wal_writer_delay, 600 ms by default) are lost if the PostgreSQL server or the machine crashes',
    );
    fixes.push("set synchronous_commit = on (it can come from postgresql.conf, ALTER DATABASE / ALTER ROLE ... SET, or the connection's options)");
  }
  if (settings.fsync === 'off') {
    risks.push('fsync is off, so PostgreSQL never forces its writes to disk: an OS crash or power loss can lose acknowledged turns and corrupt the database');
    fixes.push('set fsync = on in postgresql.conf and reload');
  }
  if (settings.full_page_writes === 'off') {
    risks.push('full_page_writes is off, so a power loss in the middle of a page write can leave a torn page that recovery cannot repair');
    fixes.push('set full_page_writes = on in postgresql.conf and reload');
  }
  if (risks.length === 0) return undefined;
  return (
    `Skein PostgreSQL store at ${server}: ${risks.join('; ')}. To keep every acknowledged turn, ${fixes.join('; ')}. ` +
    'If this is intended, pass `durabilityCheck: false` to the PostgreSQL store to skip this check.'
  );
}
