import { type SerializedThread, ThreadConflictError } from 'skein';
import { PostgresTable, type PostgresTableOptions } from './postgres-table.js';
import type { A2AContextStore, StoredA2AContext } from './a2a-context-store.js';

/** `connectionString` or `pool`; `schema` (default `skein`) holds the `skein_a2a_contexts` table, created on first use. */
export type PostgresA2AContextStoreOptions = PostgresTableOptions;

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
  readonly #table: PostgresTable;

  constructor(options: PostgresA2AContextStoreOptions = {}) {
    this.#table = new PostgresTable(options, 'skein_a2a_contexts', 'A2A context store', (name) => [
      `CREATE TABLE IF NOT EXISTS ${name} (context_id text PRIMARY KEY, thread jsonb NOT NULL, version integer NOT NULL, owner text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`,
    ]);
  }

  async load(contextId: string): Promise<StoredA2AContext | undefined> {
    const { rows } = await this.#query<{ thread: SerializedThread; version: number; owner: string }>(
      `SELECT thread, version, owner FROM ${this.#table.name} WHERE context_id = $1`,
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
            `INSERT INTO ${this.#table.name} (context_id, thread, version, owner) VALUES ($1, $2::jsonb, 1, $3) ON CONFLICT (context_id) DO NOTHING RETURNING version`,
            [contextId, json, owner],
          )
        : await this.#query<{ version: number }>(
            `UPDATE ${this.#table.name} SET thread = $2::jsonb, version = version + 1, updated_at = now() WHERE context_id = $1 AND version = $3 RETURNING version`,
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
    await this.#query(`DELETE FROM ${this.#table.name} WHERE context_id = $1`, [contextId]);
  }

  /** Ends the pool this store made (not a pool you passed in). */
  async close(): Promise<void> {
    await this.#table.close();
  }

  #query<R extends object>(sql: string, params: unknown[]): Promise<{ rows: R[]; rowCount: number | null }> {
    return this.#table.query<R>(sql, params);
  }
}
