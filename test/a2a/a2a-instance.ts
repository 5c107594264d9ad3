/**
 * One A2AServer process for the scale-out tests: a ChatAgent on the emulator (with the
 * delete_file approval tool), contexts and tasks in the shared stores named by env. Prints
 * `listening <url>` once listening; runs until killed.
 *
 * STORE=redis|postgres: the context store; PREFIX isolates the run (Redis key prefix, PostgreSQL schema).
 * TASKS=skein|sdk: tasks in Skein's PostgresTaskStore (default), or the SDK's DatabaseTaskStore and
 * DatabasePushNotificationStore on Kysely (tables made by migrateA2ADatabase in schema PREFIX; leases renewed
 * by sdkDatabaseLeaseRenewal).
 * LEASE_MS / RENEW_MS: the task lease. PUSH=1: push notifications, loopback webhooks allowed.
 */
import 'reflect-metadata';
import { InMemoryTaskStore, type PushNotificationStore, type TaskStore } from '@a2a-js/sdk/server';
import { DatabasePushNotificationStore, DatabaseTaskStore } from '@a2a-js/sdk/server/database';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { ChatAgent } from 'skein';
import { A2AServer, PostgresA2AContextStore, PostgresTaskStore, RedisA2AContextStore, type TaskLeaseRenewal, sdkDatabaseLeaseRenewal } from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { deleteFileTool } from '../support/example-tools.js';

const { EMULATOR_URL, STORE, PREFIX, REDIS_URL, DATABASE_URL, TASKS, LEASE_MS, RENEW_MS, PUSH } = process.env;
const agent = new ChatAgent({
  chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: EMULATOR_URL!, maxRetries: 0, model: 'gpt-test' }),
  name: 'assistant',
  tools: [deleteFileTool([])],
});
const contextStore =
  STORE === 'redis' ? new RedisA2AContextStore({ url: REDIS_URL, keyPrefix: `${PREFIX}:a2a:` }) : new PostgresA2AContextStore({ connectionString: DATABASE_URL, schema: PREFIX });
let taskStore: TaskStore;
let pushStore: PushNotificationStore | undefined;
let renewal: TaskLeaseRenewal | undefined;
if (TASKS === 'sdk') {
  // The SDK's stores name their tables unqualified: the pool's search_path puts them in this run's schema.
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: DATABASE_URL, options: `-c search_path=${PREFIX}`, max: 5 }) }) });
  taskStore = new DatabaseTaskStore(db);
  pushStore = new DatabasePushNotificationStore(db);
  renewal = sdkDatabaseLeaseRenewal(db);
} else {
  // Redis has no task store of Skein's: its run shares tasks through PostgreSQL too when given, else keeps them per process.
  taskStore = DATABASE_URL ? new PostgresTaskStore({ connectionString: DATABASE_URL, schema: PREFIX }) : new InMemoryTaskStore();
}
const server = new A2AServer({
  agent,
  contextStore,
  taskStore,
  taskLease: { leaseMs: Number(LEASE_MS ?? 30_000), renewIntervalMs: Number(RENEW_MS ?? 10_000), renewal },
  pushNotifications: PUSH === '1' ? { store: pushStore, webhookAllowed: (url) => url.hostname === '127.0.0.1' } : undefined,
  logger: { warn: () => {}, error: (m, e) => console.error(m, e) },
});
const url = await server.listen();
process.stdout.write(`listening ${url}\n`);
