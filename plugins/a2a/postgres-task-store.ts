import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import { TaskState, taskFromJson, taskToJson } from './a2a-peers.js';
import type { TaskStore } from '@a2a-js/sdk/server';
import { TASK_LEASE_METADATA_KEY, type TaskLeaseRenewal } from './leased-task-store.js';
import { PostgresTable, type PostgresTableOptions } from './postgres-table.js';

/** `connectionString` or `pool`; `schema` (default `skein`) holds the `skein_a2a_tasks` table, created on first use. */
export type PostgresTaskStoreOptions = PostgresTableOptions;

const DEFAULT_PAGE_SIZE = 50;

/**
 * The SDK's `TaskStore` on PostgreSQL with `pg` (the SDK's own `DatabaseTaskStore` needs Kysely,
 * which Skein does not depend on): tasks as the protocol's JSON in `<schema>.skein_a2a_tasks`,
 * so every A2AServer process sharing it can get, continue and cancel any task.
 *
 * @example
 * const server = new A2AServer({ agent, taskStore: new PostgresTaskStore({ connectionString }), contextStore });
 */
export class PostgresTaskStore implements TaskStore, TaskLeaseRenewal {
  readonly #table: PostgresTable;

  constructor(options: PostgresTaskStoreOptions = {}) {
    this.#table = new PostgresTable(options, 'skein_a2a_tasks', 'A2A task store', (name) => [
      `CREATE TABLE IF NOT EXISTS ${name} (task_id text PRIMARY KEY, context_id text NOT NULL, state integer NOT NULL, status_time text NOT NULL, task jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE INDEX IF NOT EXISTS skein_a2a_tasks_context ON ${name} (context_id)`,
    ]);
  }

  async save(task: Task): Promise<void> {
    await this.#query(
      `INSERT INTO ${this.#table.name} (task_id, context_id, state, status_time, task) VALUES ($1, $2, $3, $4, $5::jsonb)
       ON CONFLICT (task_id) DO UPDATE SET context_id = EXCLUDED.context_id, state = EXCLUDED.state, status_time = EXCLUDED.status_time, task = EXCLUDED.task, updated_at = now()`,
      [task.id, task.contextId, task.status?.state ?? 0, task.status?.timestamp ?? '', JSON.stringify(taskToJson(task))],
    );
  }

  async load(taskId: string): Promise<Task | undefined> {
    const { rows } = await this.#query<{ task: unknown }>(`SELECT task FROM ${this.#table.name} WHERE task_id = $1`, [taskId]);
    return rows[0] ? taskFromJson(rows[0].task) : undefined;
  }

  /** A `LeasedTaskStore`'s renewal in one `UPDATE`: only while the task still runs under this instance's lease. */
  async renewTaskLease(taskId: string, instance: string, expiresAt: number): Promise<boolean> {
    const { rowCount } = await this.#query(
      `UPDATE ${this.#table.name}
       SET task = jsonb_set(task, '{metadata}', coalesce(task->'metadata', '{}'::jsonb) || jsonb_build_object($2::text, jsonb_build_object('instance', $3::text, 'expiresAt', $4::bigint))), updated_at = now()
       WHERE task_id = $1 AND state IN ($5, $6) AND task->'metadata'->$2::text->>'instance' = $3::text`,
      [taskId, TASK_LEASE_METADATA_KEY, instance, expiresAt, TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING],
    );
    return rowCount === 1;
  }

  /** Newest status first; `pageToken` is an opaque offset. */
  async list(params: ListTasksRequest): Promise<ListTasksResponse> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (params.contextId) where.push(`context_id = $${args.push(params.contextId)}`);
    if (params.status) where.push(`state = $${args.push(params.status)}`);
    if (params.statusTimestampAfter) where.push(`status_time > $${args.push(new Date(params.statusTimestampAfter).toISOString())}`);
    const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const pageSize = params.pageSize || DEFAULT_PAGE_SIZE;
    const offset = params.pageToken ? Number(Buffer.from(params.pageToken, 'base64url').toString()) || 0 : 0;
    const total = Number((await this.#query<{ n: string }>(`SELECT count(*) AS n FROM ${this.#table.name} ${filter}`, args)).rows[0]?.n ?? 0);
    const { rows } = await this.#query<{ task: unknown }>(
      `SELECT task FROM ${this.#table.name} ${filter} ORDER BY status_time DESC, task_id DESC LIMIT ${pageSize} OFFSET ${offset}`,
      args,
    );
    const tasks = rows.map((r) => {
      const task = taskFromJson(r.task);
      return params.includeArtifacts ? task : { ...task, artifacts: [] };
    });
    const next = offset + tasks.length < total ? Buffer.from(String(offset + tasks.length)).toString('base64url') : '';
    return { tasks, nextPageToken: next, pageSize, totalSize: total };
  }

  /** Ends the pool this store made (not a pool you passed in). */
  async close(): Promise<void> {
    await this.#table.close();
  }

  #query<R extends object>(sql: string, params: unknown[]): Promise<{ rows: R[]; rowCount: number | null }> {
    return this.#table.query<R>(sql, params);
  }
}
