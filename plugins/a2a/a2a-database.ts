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

/** The lock table the SDK's `a2a-db` gives Kysely's migrator (every store shares it). */
const MIGRATION_LOCK_TABLE = 'a2a_migrations_lock';
/** The ledger table of a store's table, as the SDK's `a2a-db` names it (`a2a_<table>_migrations`). */
const ledgerTable = (table: string): string => `a2a_${table}_migrations`;
/** The SDK's `a2a-db` refuses longer table names (room for the names a migration derives from it). */
const MAX_TABLE_NAME_LENGTH = 37;

/**
 * Creates (or brings up to date) the tables of the SDK's `DatabaseTaskStore` and
 * `DatabasePushNotificationStore` by running the SDK's own migrations (its `a2a-db upgrade`
 * command, which keeps a ledger, so running it again is a no-op). The stores do not create
 * their tables; run this once per deploy (or at start-up). Needs
 * `kysely` and the database's driver (`pg`) installed. On PostgreSQL any number of schemas of one
 * database can each hold their own set (see docs/a2a.md, "The SDK's database stores").
 *
 * @example
 * await migrateA2ADatabase({ url: process.env.DATABASE_URL!, schema: 'agents' });
 * const db = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString, options: '-c search_path=agents' }) }) });
 * new A2AServer({ agent, taskStore: new DatabaseTaskStore(db), pushNotifications: { store: new DatabasePushNotificationStore(db) } });
 */
export async function migrateA2ADatabase(options: A2ADatabaseMigrationOptions): Promise<void> {
  if (!options?.url) throw new ConfigurationError('migrateA2ADatabase needs the database URL, e.g. { url: "postgres://user@host:5432/db" }.');
  requirePeers(A2A_ENTRY_POINT, ['kysely']);
  const postgres = /^postgres(ql)?:/.test(options.url);
  if (options.schema !== undefined) {
    if (!postgres) throw new ConfigurationError(`migrateA2ADatabase: schema is for PostgreSQL URLs (postgres://…), found a ${options.url.split(':')[0]}: URL.`);
    if (!SCHEMA_PATTERN.test(options.schema)) throw new ConfigurationError(`migrateA2ADatabase: schema must be a lower-case SQL identifier (letters, digits, "_"), found "${options.schema}".`);
  }
  const tables = [options.taskTable ?? 'tasks', options.pushNotificationTable ?? 'push_notification_configs'];
  for (const table of tables) checkTableName(table);
  let url = options.url;
  if (postgres) {
    const schema = await prepareSchema(url, options.schema, tables.map(ledgerTable));
    const parsed = new URL(url);
    parsed.searchParams.set('options', `-c search_path=${schema}`);
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

function checkTableName(table: string): void {
  if (!IDENTIFIER.test(table) || table.length > MAX_TABLE_NAME_LENGTH) {
    throw new ConfigurationError(
      `migrateA2ADatabase: a table name must be letters, digits and "_", at most ${MAX_TABLE_NAME_LENGTH} characters (the SDK's a2a-db limit), found "${table}".`,
    );
  }
}

/** What `prepareSchema` uses of Kysely's `Migrator` (its class lives in `kysely/migration` from 0.29, in `kysely` before). */
type KyselyMigrator = new (props: {
  db: unknown;
  provider: { getMigrations(): Promise<Record<string, { up(db: unknown): Promise<void> }>> };
  migrationTableSchema: string;
  migrationTableName: string;
  migrationLockTableName: string;
}) => { migrateToLatest(): Promise<{ error?: unknown }> };

function kyselyMigrator(): KyselyMigrator {
  for (const specifier of ['kysely/migration', 'kysely']) {
    try {
      const { Migrator } = loadPeer<{ Migrator?: KyselyMigrator }>(A2A_ENTRY_POINT, specifier);
      if (typeof Migrator === 'function') return Migrator;
    } catch {
      // kysely 0.28 has no kysely/migration: try the package itself.
    }
  }
  throw new ConfigurationError('migrateA2ADatabase needs Kysely\'s Migrator (kysely 0.28 or later): npm install kysely.');
}

/**
 * Makes the schema (given, or the connection's `current_schema()`) hold its own migration lock and
 * ledger tables before the SDK's `a2a-db` runs there. Why: the SDK gives Kysely's `Migrator` no
 * `migrationTableSchema`, and without one Kysely checks whether those tables exist in *any*
 * schema of the database but reads and creates them unqualified (through `search_path`). So once
 * one schema (or `public`) holds them, `a2a-db` in another schema skips creating its own, then
 * fails with "relation a2a_migrations_lock does not exist" (or, with that schema on its
 * search_path, reads another schema's ledger and migrates nothing). Kysely's own `Migrator`, given
 * the schema and no migration to run, creates exactly the tables (and lock row) it would, in that schema.
 */
async function prepareSchema(url: string, given: string | undefined, ledgers: string[]): Promise<string> {
  const { Kysely, PostgresDialect, CompiledQuery } = loadPeer<typeof KyselyModule>(A2A_ENTRY_POINT, 'kysely');
  const pg = loadPeer<{ default: typeof Pg }>(A2A_ENTRY_POINT, 'pg').default;
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => {});
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  let schema = given;
  try {
    schema ??= (await db.executeQuery<{ schema: string | null }>(CompiledQuery.raw('SELECT current_schema() AS schema'))).rows[0]?.schema ?? undefined;
    if (!schema) throw new ConfigurationError("migrateA2ADatabase: the connection's search_path names no existing schema; pass { schema } or create one.");
    const Migrator = kyselyMigrator();
    const present = await db.executeQuery<{ name: string }>(
      CompiledQuery.raw('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_name = ANY($2)', [schema, [...ledgers, MIGRATION_LOCK_TABLE]]),
    );
    const found = new Set(present.rows.map((row) => row.name));
    for (const ledger of ledgers) {
      if (found.has(ledger) && found.has(MIGRATION_LOCK_TABLE)) continue;
      // A ledger without the lock table (an `a2a-db upgrade --sql` script makes none): Kysely
      // refuses a ledger naming migrations it does not know, so the applied ones are named, as no-ops.
      const applied = found.has(ledger) ? (await db.executeQuery<{ name: string }>(CompiledQuery.raw(`SELECT name FROM ${quoted(schema)}.${quoted(ledger)}`))).rows : [];
      const known = Object.fromEntries(applied.map(({ name }) => [name, { up: async () => {} }]));
      const migrator = new Migrator({ db, provider: { getMigrations: async () => known }, migrationTableSchema: schema, migrationTableName: ledger, migrationLockTableName: MIGRATION_LOCK_TABLE });
      const { error } = await migrator.migrateToLatest();
      if (error) throw error;
    }
    return schema;
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new StoreError('postgres', `migrateA2ADatabase could not prepare schema "${schema ?? '(current)'}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    await db.destroy().catch(() => {});
  }
}

function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** The SDK's `a2a-db` command, from its package.json `bin`. */
async function sdkCli(): Promise<string> {
  const root = new URL('../', import.meta.resolve('@a2a-js/sdk'));
  const manifest = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { bin?: Record<string, string> };
  const bin = manifest.bin?.['a2a-db'];
  if (!bin) throw new ConfigurationError('This @a2a-js/sdk has no a2a-db command; migrateA2ADatabase needs @a2a-js/sdk 1.3 or later.');
  return fileURLToPath(new URL(bin, root));
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
