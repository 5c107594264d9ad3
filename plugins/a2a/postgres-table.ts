import type Pg from 'pg';
import { StoreError, loadPeer } from 'skein';
import { A2A_ENTRY_POINT } from './a2a-peers.js';

/** The part of a `pg.Pool` the A2A stores use (structural: pg's types are not needed to use them). */
export interface A2APostgresPool {
  query<R extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
  connect(): Promise<{ query(text: string, values?: unknown[]): Promise<unknown>; release(): void }>;
}

export interface PostgresTableOptions {
  /** `postgres://user[:password]@host:port/db`. */
  connectionString?: string;
  /** Use this pool (e.g. the one your message store uses) instead of making one; you end it. */
  pool?: A2APostgresPool;
  /** The schema of the table (created on first use). Default `skein`. */
  schema?: string;
}

const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]*$/;

/**
 * One table of the A2A stores: its pool (given or made), created on first use (serialized by an
 * advisory lock, so processes starting together do not race), and queries whose failures are
 * StoreErrors.
 */
export class PostgresTable {
  readonly name: string;
  readonly #pool: A2APostgresPool;
  readonly #end: (() => Promise<void>) | undefined;
  readonly #schema: string;
  readonly #ddl: string[];
  readonly #what: string;
  #ready: Promise<void> | undefined;

  /** `ddl(name)`: the statements creating the table `name` (schema-qualified) and its indexes. */
  constructor(options: PostgresTableOptions, table: string, what: string, ddl: (name: string) => string[]) {
    const schema = options.schema ?? 'skein';
    if (!SCHEMA_PATTERN.test(schema)) throw new StoreError('postgres', `schema must be a lower-case SQL identifier (letters, digits, "_"), found "${schema}".`);
    if (!options.pool && !options.connectionString) throw new StoreError('postgres', `The ${what} needs { connectionString } or { pool }.`);
    if (options.pool) {
      this.#pool = options.pool;
    } else {
      // pg is an optional peer: loaded when a store makes its own pool.
      const pg = loadPeer<{ default: typeof Pg }>(A2A_ENTRY_POINT, 'pg').default;
      const pool = new pg.Pool({ connectionString: options.connectionString, max: 5 });
      pool.on('error', () => {});
      this.#pool = pool;
      this.#end = () => pool.end();
    }
    this.#schema = schema;
    this.#what = what;
    this.name = `"${schema}".${table}`;
    this.#ddl = ddl(this.name);
  }

  async query<R extends object>(sql: string, params: unknown[]): Promise<{ rows: R[]; rowCount: number | null }> {
    try {
      this.#ready ??= this.#create().catch((error: unknown) => {
        this.#ready = undefined;
        throw error;
      });
      await this.#ready;
      return await this.#pool.query<R>(sql, params);
    } catch (error) {
      if (error instanceof StoreError) throw error;
      throw new StoreError('postgres', `The ${this.#what}'s query failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  /** Ends the pool this table made (not a pool you passed in). */
  async close(): Promise<void> {
    await this.#end?.();
  }

  async #create(): Promise<void> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`skein:${this.name}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${this.#schema}"`);
      for (const statement of this.#ddl) await client.query(statement);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}
