import type * as Pg from 'pg';
import { ConfigurationError, loadPeer } from 'skein';
import { AG_UI_ENTRY_POINT } from './ag-ui-peers.js';
import { type AgUiThreadRecord, type AgUiThreadStore, type StoredAgUiThread, conflictError } from './ag-ui-thread-store.js';

export interface PostgresAgUiThreadStoreOptions {
  /** A pool of your own (you end it), or a connection string for one made here (`close` ends it). */
  pool?: Pg.Pool;
  connectionString?: string;
  /** Default `public`. */
  schema?: string;
  /** Default `skein_ag_ui_threads`. */
  table?: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * AG-UI thread records in PostgreSQL, for several server instances behind one load balancer:
 * with the agents' messages in a durable store too, any instance continues any thread, and a save
 * checked against the version read means two instances never overwrite each other's turn. Needs
 * `pg`. Create the table once with `migrate()`.
 *
 * @example
 * const threads = new PostgresAgUiThreadStore({ connectionString: process.env.DATABASE_URL });
 * await threads.migrate();
 * const server = new AgUiServer({ agents, threads });
 */
export class PostgresAgUiThreadStore implements AgUiThreadStore {
  readonly #pool: Pg.Pool;
  readonly #owned: boolean;
  readonly #table: string;
  readonly #schema: string;

  constructor(options: PostgresAgUiThreadStoreOptions) {
    const schema = options.schema ?? 'public';
    const table = options.table ?? 'skein_ag_ui_threads';
    for (const [name, value] of [['schema', schema], ['table', table]] as const) {
      if (!IDENTIFIER.test(value)) throw new ConfigurationError(`PostgresAgUiThreadStore ${name}: expected letters, digits and "_" (at most 63), found ${JSON.stringify(value)}.`);
    }
    if (!options.pool && !options.connectionString) throw new ConfigurationError('PostgresAgUiThreadStore needs a pool or a connectionString.');
    this.#schema = schema;
    this.#table = `"${schema}"."${table}"`;
    this.#owned = !options.pool;
    this.#pool = options.pool ?? new (loadPeer<{ default: typeof Pg }>(AG_UI_ENTRY_POINT, 'pg').default.Pool)({ connectionString: options.connectionString });
  }

  /** Creates the schema and table when missing. */
  async migrate(): Promise<void> {
    await this.#pool.query(`CREATE SCHEMA IF NOT EXISTS "${this.#schema}"`);
    await this.#pool.query(`CREATE TABLE IF NOT EXISTS ${this.#table} (thread_id text PRIMARY KEY, version integer NOT NULL, record jsonb NOT NULL)`);
  }

  async load(threadId: string): Promise<StoredAgUiThread | undefined> {
    const { rows } = await this.#pool.query<{ version: number; record: AgUiThreadRecord }>(`SELECT version, record FROM ${this.#table} WHERE thread_id = $1`, [threadId]);
    const row = rows[0];
    return row ? { ...row.record, version: row.version } : undefined;
  }

  async save(threadId: string, record: AgUiThreadRecord, expectedVersion: number | undefined): Promise<number> {
    const json = JSON.stringify(record);
    const { rows } =
      expectedVersion === undefined
        ? await this.#pool.query<{ version: number }>(`INSERT INTO ${this.#table} (thread_id, version, record) VALUES ($1, 1, $2) ON CONFLICT (thread_id) DO NOTHING RETURNING version`, [threadId, json])
        : await this.#pool.query<{ version: number }>(`UPDATE ${this.#table} SET version = version + 1, record = $2 WHERE thread_id = $1 AND version = $3 RETURNING version`, [threadId, json, expectedVersion]);
    if (rows[0]) return rows[0].version;
    throw conflictError(threadId, expectedVersion, (await this.load(threadId))?.version);
  }

  /** Ends the pool made from `connectionString` (a pool you passed is yours to end). */
  async close(): Promise<void> {
    if (this.#owned) await this.#pool.end();
  }
}
