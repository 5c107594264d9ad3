import pg from 'pg';
import { type SerializedThread, StoreError, ThreadConflictError } from 'skein';
import type { A2AContextStore, StoredA2AContext } from './a2a-context-store.js';

export interface PostgresA2AContextStoreOptions {
  /** `postgres://user[:password]@host:port/db`. */
  connectionString?: string;
  /** Use this pool (e.g. the one your message store uses) instead of making one; you end it. */
  pool?: pg.Pool;
  /** The schema of the `skein_a2a_contexts` table (created on first use). Default `skein`. */
  schema?: string;
}

const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]*$/;

/**
 * A2A contexts in PostgreSQL (`<schema>.skein_a2a_contexts`: context id, thread JSON, version,
 * owner), saved with a version check in the UPDATE itself: several A2AServer processes sharing
 * it continue any context, and two turns on one context never overwrite each other. The table
 * is created on first use.
 *
 * @example
 * const server = new A2AServer({ agent, contextStore: new PostgresA2AContextStore({ connectionString: process.env.DATABASE_URL }) });
 */
export class PostgresA2AContextStore implements A2AContextStore {
  readonly #pool: pg.Pool;
  readonly #owned: boolean;
  readonly #table: string;
  readonly #schema: string;
  #ready: Promise<void> | undefined;

  constructor(options: PostgresA2AContextStoreOptions = {}) {
    const schema = options.schema ?? 'skein';
    if (!SCHEMA_PATTERN.test(schema)) throw new StoreError('postgres', `schema must be a lower-case SQL identifier (letters, digits, "_"), found "${schema}".`);
    if (!options.pool && !options.connectionString) throw new StoreError('postgres', 'PostgresA2AContextStore needs { connectionString } or { pool }.');
    this.#owned = options.pool === undefined;
    this.#pool = options.pool ?? new pg.Pool({ connectionString: options.connectionString, max: 5 });
    if (this.#owned) this.#pool.on('error', () => {});
    this.#schema = schema;
    this.#table = `"${schema}".skein_a2a_contexts`;
  }

  async load(contextId: string): Promise<StoredA2AContext | undefined> {
    const { rows } = await this.#query<{ thread: SerializedThread; version: number; owner: string }>(
      `SELECT thread, version, owner FROM ${this.#table} WHERE context_id = $1`,
      [contextId],
    );
    const row = rows[0];
    return row && { thread: row.thread, version: Number(row.version), owner: row.owner };
  }

  async save(contextId: string, thread: SerializedThread, expectedVersion: number | undefined, owner: string): Promise<number> {
    const json = JSON.stringify(thread);
    const { rows } =
      expectedVersion === undefined
        ? await this.#query<{ version: number }>(
            `INSERT INTO ${this.#table} (context_id, thread, version, owner) VALUES ($1, $2::jsonb, 1, $3) ON CONFLICT (context_id) DO NOTHING RETURNING version`,
            [contextId, json, owner],
          )
        : await this.#query<{ version: number }>(
            `UPDATE ${this.#table} SET thread = $2::jsonb, version = version + 1, updated_at = now() WHERE context_id = $1 AND version = $3 RETURNING version`,
            [contextId, json, expectedVersion],
          );
    if (rows[0]) return Number(rows[0].version);
    const found = (await this.load(contextId))?.version;
    throw new ThreadConflictError(
      `A2A context ${contextId} changed since this turn read it (expected version ${expectedVersion ?? 'none'}, found ${found ?? 'none'}); send the turn again.`,
      expectedVersion,
      found,
    );
  }

  async delete(contextId: string): Promise<void> {
    await this.#query(`DELETE FROM ${this.#table} WHERE context_id = $1`, [contextId]);
  }

  /** Ends the pool this store made (not a pool you passed in). */
  async close(): Promise<void> {
    if (this.#owned) await this.#pool.end();
  }

  async #query<R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      this.#ready ??= this.#createTable().catch((error: unknown) => {
        this.#ready = undefined;
        throw error;
      });
      await this.#ready;
      return await this.#pool.query<R>(sql, params);
    } catch (error) {
      if (error instanceof StoreError) throw error;
      throw new StoreError('postgres', `The A2A context store's query failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  async #createTable(): Promise<void> {
    const client = await this.#pool.connect();
    try {
      // Serialized: two processes starting at once must not both try CREATE.
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`skein-a2a-contexts:${this.#schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${this.#schema}"`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.#table} (context_id text PRIMARY KEY, thread jsonb NOT NULL, version integer NOT NULL, owner text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`,
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}
