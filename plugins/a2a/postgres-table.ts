import pg from 'pg';
import { StoreError } from 'skein';

export interface PostgresTableOptions {
  /** `postgres://user[:password]@host:port/db`. */
  connectionString?: string;
  /** Use this pool (e.g. the one your message store uses) instead of making one; you end it. */
  pool?: pg.Pool;
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
  readonly #pool: pg.Pool;
  readonly #owned: boolean;
  readonly #schema: string;
  readonly #ddl: string[];
  readonly #what: string;
  #ready: Promise<void> | undefined;

  /** `ddl(name)`: the statements creating the table `name` (schema-qualified) and its indexes. */
  constructor(options: PostgresTableOptions, table: string, what: string, ddl: (name: string) => string[]) {
    const schema = options.schema ?? 'skein';
    if (!SCHEMA_PATTERN.test(schema)) throw new StoreError('postgres', `schema must be a lower-case SQL identifier (letters, digits, "_"), found "${schema}".`);
    if (!options.pool && !options.connectionString) throw new StoreError('postgres', `The ${what} needs { connectionString } or { pool }.`);
    this.#owned = options.pool === undefined;
    this.#pool = options.pool ?? new pg.Pool({ connectionString: options.connectionString, max: 5 });
    if (this.#owned) this.#pool.on('error', () => {});
    this.#schema = schema;
    this.#what = what;
    this.name = `"${schema}".${table}`;
    this.#ddl = ddl(this.name);
  }

  async query<R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
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
    if (this.#owned) await this.#pool.end();
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
