import type Pg from 'pg';
import type * as KyselyModule from 'kysely';
import type * as A2AServerModule from '@a2a-js/sdk/server';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ConfigurationError, StoreError, loadPeer, requirePeers } from 'skein';
import { A2A_ENTRY_POINT } from './a2a-peers.js';
import { TASK_LEASE_METADATA_KEY, type TaskLeaseRenewal } from './leased-task-store.js';

export interface A2ADatabaseMigrationOptions {
  /** The database URL the SDK's `a2a-db` takes: `postgres://…` (or `mysql://…`, `sqlite:./a2a.db`). */
  url: string;
  /**
   * PostgreSQL only: the schema the tables go in (created when missing), through the connection's
   * `search_path`. Give the stores' pool the same (`new pg.Pool({ connectionString, options: '-c search_path=<schema>' })`).
   * Default: the connection's own search_path (usually `public`).
   */
  schema?: string;
  /** The task table's name, when your `DatabaseTaskStore` has `tableName` (default `tasks`). */
  taskTable?: string;
  /** The push notification table's name, when your `DatabasePushNotificationStore` has `tableName` (default `push_notification_configs`). */
  pushNotificationTable?: string;
}

const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]*$/;

/**
 * Creates (or brings up to date) the tables of the SDK's `DatabaseTaskStore` and
 * `DatabasePushNotificationStore` by running the SDK's own migrations (its `a2a-db upgrade`
 * command, which keeps a ledger, so running it again is a no-op). The stores do not create
 * their tables; run this once per deploy (or at start-up). Needs
 * `kysely` and the database's driver (`pg`) installed.
 *
 * @example
 * await migrateA2ADatabase({ url: process.env.DATABASE_URL!, schema: 'agents' });
 * const db = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString, options: '-c search_path=agents' }) }) });
 * new A2AServer({ agent, taskStore: new DatabaseTaskStore(db), pushNotifications: { store: new DatabasePushNotificationStore(db) } });
 */
export async function migrateA2ADatabase(options: A2ADatabaseMigrationOptions): Promise<void> {
  if (!options?.url) throw new ConfigurationError('migrateA2ADatabase needs the database URL, e.g. { url: "postgres://user@host:5432/db" }.');
  requirePeers(A2A_ENTRY_POINT, ['kysely']);
  let url = options.url;
  if (options.schema !== undefined) {
    if (!/^postgres(ql)?:/.test(url)) throw new ConfigurationError(`migrateA2ADatabase: schema is for PostgreSQL URLs (postgres://…), found a ${url.split(':')[0]}: URL.`);
    if (!SCHEMA_PATTERN.test(options.schema)) throw new ConfigurationError(`migrateA2ADatabase: schema must be a lower-case SQL identifier (letters, digits, "_"), found "${options.schema}".`);
    await createSchema(url, options.schema);
    const parsed = new URL(url);
    parsed.searchParams.set('options', `-c search_path=${options.schema}`);
    url = parsed.toString();
  }
  // The URL goes in the environment, not the command line other users of the host can list.
  const args = ['upgrade'];
  if (options.taskTable) args.push('--tasks-table-name', options.taskTable);
  if (options.pushNotificationTable) args.push('--push-notification-configs-table-name', options.pushNotificationTable);
  const cli = await sdkCli();
  await new Promise<void>((resolve, reject) => {
    execFile(process.execPath, [cli, ...args], { timeout: 60_000, env: { ...process.env, DATABASE_URL: url } }, (error, _stdout, stderr) => {
      if (!error) return resolve();
      // The CLI's message says what failed (a driver missing, the server refusing); the URL may hold a password, so it is not repeated.
      reject(new StoreError('a2a-db', `The SDK's a2a-db upgrade failed: ${stderr.trim() || error.message}`, { cause: error }));
    });
  });
}

/** The SDK's `a2a-db` command, from its package.json `bin`. */
async function sdkCli(): Promise<string> {
  const root = new URL('../', import.meta.resolve('@a2a-js/sdk'));
  const manifest = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { bin?: Record<string, string> };
  const bin = manifest.bin?.['a2a-db'];
  if (!bin) throw new ConfigurationError('This @a2a-js/sdk has no a2a-db command; migrateA2ADatabase needs @a2a-js/sdk 1.3 or later.');
  return fileURLToPath(new URL(bin, root));
}

async function createSchema(url: string, schema: string): Promise<void> {
  const pg = loadPeer<{ default: typeof Pg }>(A2A_ENTRY_POINT, 'pg').default;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  } catch (error) {
    throw new StoreError('postgres', `migrateA2ADatabase could not create schema "${schema}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    await client.end().catch(() => {});
  }
}

/** The part of a Kysely instance `sdkDatabaseLeaseRenewal` uses (structural: Skein's types do not need kysely's). */
export interface A2AKyselyExecutor {
  executeQuery(query: unknown): Promise<{ numAffectedRows?: bigint }>;
}

export interface SdkDatabaseLeaseRenewalOptions {
  /** The `DatabaseTaskStore`'s `tableName` (default `tasks`); `schema.table` works too. */
  tableName?: string;
  /** The `DatabaseTaskStore`'s `ownerResolver`, when you gave it one (default: the SDK's `resolveUserScope`). */
  ownerResolver?: (context: ServerCallContext) => string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Atomic lease renewal for the SDK's `DatabaseTaskStore` on PostgreSQL: one `UPDATE` of the
 * lease in the task's metadata that applies only while the task still runs under this
 * instance's lease, so a renewal never undoes a cancel written through another instance at the
 * same moment (without it, a `LeasedTaskStore` renews with a load then a save).
 *
 * @example
 * const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
 * new A2AServer({ agent, taskStore: new DatabaseTaskStore(db), taskLease: { renewal: sdkDatabaseLeaseRenewal(db) } });
 */
export function sdkDatabaseLeaseRenewal(db: A2AKyselyExecutor, options: SdkDatabaseLeaseRenewalOptions = {}): TaskLeaseRenewal {
  if (typeof db?.executeQuery !== 'function') throw new ConfigurationError('sdkDatabaseLeaseRenewal needs the Kysely instance your DatabaseTaskStore uses.');
  const tableName = options.tableName ?? 'tasks';
  const parts = tableName.split('.');
  if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    throw new ConfigurationError(`sdkDatabaseLeaseRenewal: tableName must be a table name or schema.table of letters, digits and "_", found "${tableName}".`);
  }
  const table = parts.map((part) => `"${part}"`).join('.');
  const { CompiledQuery } = loadPeer<typeof KyselyModule>(A2A_ENTRY_POINT, 'kysely');
  const owner = options.ownerResolver ?? loadPeer<typeof A2AServerModule>(A2A_ENTRY_POINT, '@a2a-js/sdk/server').resolveUserScope;
  // The SDK keeps metadata as JSON text and the state as its enum name.
  const sql = `UPDATE ${table}
    SET metadata = jsonb_set(metadata::jsonb, '{${TASK_LEASE_METADATA_KEY}}', jsonb_build_object('instance', $1::text, 'expiresAt', $2::bigint))::text
    WHERE tenant = $3 AND owner = $4 AND id = $5 AND status_state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')
      AND (metadata::jsonb) -> '${TASK_LEASE_METADATA_KEY}' ->> 'instance' = $1::text`;
  return {
    async renewTaskLease(taskId, instance, expiresAt, context) {
      const result = await db.executeQuery(CompiledQuery.raw(sql, [instance, expiresAt, context.tenant ?? '', owner(context), taskId]));
      return result.numAffectedRows === 1n;
    },
  };
}
