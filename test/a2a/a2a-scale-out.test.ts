import 'reflect-metadata';
import { type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import { ServerCallContext, type TaskStore } from '@a2a-js/sdk/server';
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database';
import { Kysely, PostgresDialect } from 'kysely';
import { expect } from 'chai';
import { type ChildProcess, execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ConfigurationError, StoreError, ThreadConflictError } from 'skein';
import {
  type A2AContextStore,
  LeasedTaskStore,
  PostgresA2AContextStore,
  PostgresTaskStore,
  RedisA2AContextStore,
  type TaskLeaseRenewal,
  migrateA2ADatabase,
  partsText,
  sdkDatabaseLeaseRenewal,
} from 'skein/a2a';
import { Emulator } from 'skein/testing';
import pg from 'pg';
import { userMessage } from './remote-fixtures.js';
import { startWebhook } from './webhook-receiver.js';
import { rejection, until } from '../support/async-expectations.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';
import { DATABASE_URL, REDIS_URL, RUN_ID, dropSchema, postgresAvailable, redisAvailable, withService } from '../stores/services.js';

type Webhook = Awaited<ReturnType<typeof startWebhook>>;

const INSTANCE = fileURLToPath(new URL('./a2a-instance.js', import.meta.url));

async function send(client: Client, text: string, contextId = '', taskId = ''): Promise<Task> {
  const result = await client.sendMessage({ tenant: '', message: userMessage(text, { contextId, taskId }), configuration: undefined, metadata: undefined });
  if ('messageId' in result) throw new Error('expected a task');
  return result;
}

function answer(task: Task): string {
  return task.artifacts.map((a) => partsText(a.parts)).join('');
}

/** The lease the instances run with: short, so a killed instance's task fails within the test. */
const LEASE = { LEASE_MS: '1500', RENEW_MS: '300' };

/** An A2AServer in a child process, on the test's lease; resolves once it listens. */
function startInstance(env: Record<string, string>, children: ChildProcess[]): Promise<ServerProcess> {
  return startServerProcess(INSTANCE, { ...LEASE, ...env }, children);
}

interface Pair {
  emulator: Emulator;
  instances: ServerProcess[];
  a: Client;
  b: Client;
}

/** An emulator and two A2AServer processes on the same stores, with an SDK client for each. */
async function startPair(env: Record<string, string>, children: ChildProcess[]): Promise<Pair> {
  const emulator = await Emulator.start();
  const withModel = { ...env, EMULATOR_URL: emulator.openaiBaseURL };
  const instances = await Promise.all([startInstance(withModel, children), startInstance(withModel, children)]);
  expect(instances[0]!.url).not.to.equal(instances[1]!.url);
  const [a, b] = await Promise.all(instances.map((i) => new ClientFactory().createFromUrl(i.url)));
  return { emulator, instances, a: a!, b: b! };
}

async function stopPair(pair: Pair | undefined, children: ChildProcess[], schema: string): Promise<void> {
  for (const child of children) child.kill();
  await pair?.emulator.stop();
  await dropSchema(schema);
}

async function state(client: Client, id: string): Promise<TaskState | undefined> {
  return (await client.getTask({ tenant: '', id, historyLength: 0 })).status?.state;
}

/**
 * Kills instance A (kill -9) while it runs a task held open by a stalled model stream: B sees
 * the task working while A lives (A renews its lease past its length), then failed once the lease
 * runs out, saved for every reader; the context goes on from its last completed turn on B.
 */
async function killMidTask(emulator: Emulator, a: Client, b: Client, instanceA: ServerProcess, instanceB: ServerProcess, hook?: Webhook): Promise<void> {
  const first = await send(a, 'My name is Ada');
  emulator.injectFault({ kind: 'stall-stream', afterEvents: 1, times: 1 });
  const push = hook && { tenant: '', id: '', taskId: '', url: hook.url, token: 'lost', authentication: undefined };
  const started = await a.sendMessage({
    tenant: '',
    message: userMessage('Tell me a story', { contextId: first.contextId }),
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: push, returnImmediately: true },
    metadata: undefined,
  });
  const taskId = 'id' in started ? started.id : '';
  await until(async () => (await state(b, taskId)) === TaskState.TASK_STATE_WORKING);
  // Two lease lengths with A alive: its renewals keep the task working.
  await new Promise((resolve) => setTimeout(resolve, 2 * Number(LEASE.LEASE_MS)));
  expect(await state(b, taskId)).to.equal(TaskState.TASK_STATE_WORKING);

  instanceA.child.kill('SIGKILL');
  await new Promise((resolve) => instanceA.child.once('exit', resolve));
  await until(async () => (await state(b, taskId)) !== TaskState.TASK_STATE_WORKING);

  const failed = await b.getTask({ tenant: '', id: taskId, historyLength: 10 });
  expect(failed.status?.state).to.equal(TaskState.TASK_STATE_FAILED);
  const text = partsText(failed.status?.message?.parts);
  expect(text).to.match(/^The server instance running this task stopped; send your message again \(error id [0-9a-f-]{36}\)\.$/);
  const metadata = failed.status?.message?.metadata as { errorId: string; reason: string };
  expect(metadata.reason).to.equal('instance-lost');
  expect(text).to.contain(metadata.errorId);
  expect(JSON.stringify(failed)).not.to.contain('skein.lease');
  // Saved: listing shows it failed, and B's log has the same error id.
  const listed = await b.listTasks({ tenant: '', contextId: first.contextId, status: 0, pageSize: 10, pageToken: '', historyLength: 0, includeArtifacts: false, statusTimestampAfter: undefined });
  expect(listed.tasks.find((t) => t.id === taskId)?.status?.state).to.equal(TaskState.TASK_STATE_FAILED);
  expect(instanceB.log()).to.contain(`error id ${metadata.errorId}`);
  if (hook) {
    // The instance that found it lost sent the failure to the task's webhook.
    const notified = await hook.reached('TASK_STATE_FAILED');
    expect(notified.statusUpdate?.status?.message?.metadata).to.deep.equal({ errorId: metadata.errorId, reason: 'instance-lost' });
  }
  // A message continuing the dead task is refused (it is final); the context goes on.
  const again = await send(b, 'Tell me a story', first.contextId, taskId).catch((e: unknown) => e);
  expect(String(again)).to.contain('terminal state');
  const next = await send(b, "What's my name?", first.contextId);
  expect(next.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
  expect(answer(next)).to.contain('Ada');
}

const [redisUp, postgresUp] = await Promise.all([redisAvailable(), postgresAvailable()]);

for (const store of ['redis', 'postgres'] as const) {
  const up = store === 'redis' ? redisUp && postgresUp : postgresUp;
  withService(`A2A scale-out: two A2AServer processes on ${store} contexts and PostgreSQL tasks, the SDK client alternating`, up, 'start Redis and PostgreSQL (see test/stores/services.ts)', () => {
    const prefix = `${RUN_ID}_a2a_${store}`;
    const children: ChildProcess[] = [];
    let emulator: Emulator;
    let instances: ServerProcess[];
    let a: Client;
    let b: Client;

    let pair: Pair | undefined;

    before(async () => {
      pair = await startPair({ STORE: store, PREFIX: prefix, REDIS_URL, DATABASE_URL }, children);
      ({ emulator, instances, a, b } = pair);
    });
    after(() => stopPair(pair, children, prefix));

    it('continues one context on either instance, turn after turn', async () => {
      const first = await send(a, 'My name is Ada');
      const second = await send(b, "What's my name?", first.contextId);
      expect(answer(second)).to.contain('Ada');
      const third = await send(a, 'My name is Grace', first.contextId);
      const fourth = await send(b, "What's my name?", first.contextId);
      expect([second, third, fourth].map((t) => t.contextId)).to.deep.equal([first.contextId, first.contextId, first.contextId]);
      // B answers from the turn A just took: the context is read from the shared store each turn.
      expect(answer(fourth)).to.contain('Grace');
    });

    it('a task made on one instance is read on the other', async () => {
      const task = await send(a, 'Hello there');
      const seen = await b.getTask({ tenant: '', id: task.id, historyLength: 10 });
      expect(seen.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(answer(seen)).to.equal(answer(task));
    });

    it('a working task on one instance is canceled from the other', async () => {
      emulator.injectFault({ kind: 'stall-stream', afterEvents: 1, times: 1 });
      const started = await a.sendMessage({
        tenant: '',
        message: userMessage('Tell me a story'),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
        metadata: undefined,
      });
      const taskId = 'id' in started ? started.id : '';
      await until(async () => (await state(b, taskId)) === TaskState.TASK_STATE_WORKING);
      expect((await b.cancelTask({ tenant: '', id: taskId, metadata: undefined })).status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
      expect(await state(a, taskId)).to.equal(TaskState.TASK_STATE_CANCELED);
    });

    // Last: it kills instance A.
    it('an instance killed mid-task: the other sees the task working while A lives, failed (instance-lost) after the lease; the context goes on', async () => {
      await killMidTask(emulator, a, b, instances[0]!, instances[1]!);
    });
  });
}

/** The tables `a2a-db upgrade` makes with the default names: the stores', their ledgers, Kysely's lock. */
const SDK_TABLES = ['tasks', 'push_notification_configs', 'a2a_tasks_migrations', 'a2a_push_notification_configs_migrations', 'a2a_migrations_lock'];

async function withClient<T>(use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

async function sdkTablesIn(schema: string): Promise<string[]> {
  const { rows } = await withClient((client) =>
    client.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name = ANY($2)', [schema, SDK_TABLES]),
  );
  return rows.map((r) => r.table_name);
}

async function dropPublicTables(tables: string[]): Promise<void> {
  await withClient(async (client) => {
    for (const table of tables) await client.query(`DROP TABLE IF EXISTS public."${table}"`);
  });
}

/** The SDK's own `a2a-db` command, on the test database (in `schema` through search_path, else the connection's default). */
async function a2aDb(args: string[], schema?: string): Promise<string> {
  const root = new URL('../', import.meta.resolve('@a2a-js/sdk'));
  const manifest = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { bin: Record<string, string> };
  const url = new URL(DATABASE_URL);
  if (schema) url.searchParams.set('options', `-c search_path=${schema}`);
  const { stdout } = await promisify(execFile)(process.execPath, [fileURLToPath(new URL(manifest.bin['a2a-db']!, root)), ...args], { env: { ...process.env, DATABASE_URL: url.toString() } });
  return stdout;
}

withService("A2A scale-out on the SDK's DatabaseTaskStore and DatabasePushNotificationStore (Kysely, PostgreSQL), two processes", postgresUp, 'start PostgreSQL (see test/stores/services.ts)', () => {
  const prefix = `${RUN_ID}_a2a_sdkdb`;
  const children: ChildProcess[] = [];
  let emulator: Emulator;
  let instances: ServerProcess[];
  let a: Client;
  let b: Client;

  let pair: Pair | undefined;

  // Another schema, and public, hold the SDK's tables before this run's schema is migrated: the
  // suite must not depend on being the only one (the SDK's a2a-db alone fails then).
  const other = `${RUN_ID}_a2a_other`;
  let createdInPublic: string[] = [];

  before(async () => {
    const before = await sdkTablesIn('public');
    await migrateA2ADatabase({ url: DATABASE_URL });
    createdInPublic = (await sdkTablesIn('public')).filter((table) => !before.includes(table));
    await migrateA2ADatabase({ url: DATABASE_URL, schema: other });
    // The SDK's stores do not create their tables: its migrations do.
    await migrateA2ADatabase({ url: DATABASE_URL, schema: prefix });
    pair = await startPair({ STORE: 'postgres', TASKS: 'sdk', PUSH: '1', PREFIX: prefix, DATABASE_URL }, children);
    ({ emulator, instances, a, b } = pair);
  });
  after(async () => {
    await stopPair(pair, children, prefix);
    await dropSchema(other);
    // Only the public tables this run created: another user of the database may own the rest.
    await dropPublicTables(createdInPublic);
  });

  it('migrateA2ADatabase made the SDK tables in each schema (public, another, this one), and running it again is a no-op', async () => {
    await migrateA2ADatabase({ url: DATABASE_URL, schema: prefix });
    for (const schema of [prefix, other, 'public']) expect(await sdkTablesIn(schema), schema).to.have.members(SDK_TABLES);
    // The SDK's own status command, run in this schema, reads this schema's ledger.
    const status = await a2aDb(['status'], prefix);
    expect(status).to.match(/tasks\s+0001_create_tasks\s+applied/);
    expect(status).to.match(/push-notification-configs\s+0001_create_push_notification_configs\s+applied/);
  });

  it("a schema made by the SDK's offline script (a2a-db upgrade --sql: tables and ledgers, no lock table) is then migrated as already up to date", async () => {
    const scripted = `${RUN_ID}_a2a_sqlscript`;
    const script = await a2aDb(['upgrade', '--sql', '--dialect', 'postgres']);
    try {
      await withClient(async (client) => {
        await client.query(`CREATE SCHEMA "${scripted}"`);
        await client.query(`SET search_path TO "${scripted}"`);
        await client.query(script);
      });
      expect(await sdkTablesIn(scripted)).to.have.members(SDK_TABLES.filter((table) => table !== 'a2a_migrations_lock'));
      await migrateA2ADatabase({ url: DATABASE_URL, schema: scripted });
      expect(await sdkTablesIn(scripted)).to.have.members(SDK_TABLES);
      expect(await a2aDb(['status'], scripted)).to.match(/0001_create_tasks\s+applied/);
    } finally {
      await dropSchema(scripted);
    }
  });

  it("a plain a2a-db upgrade in public still works beside the schemas (public has its own lock and ledgers)", async () => {
    expect(await a2aDb(['upgrade'])).to.contain('tasks: up to date');
    expect(await sdkTablesIn('public')).to.have.members(SDK_TABLES);
  });

  it('migrateA2ADatabase says what is wrong: a schema that is not an identifier, a database that does not answer', async () => {
    const badSchema = await rejection(migrateA2ADatabase({ url: DATABASE_URL, schema: 'Robert"; DROP' }));
    expect(badSchema).to.be.instanceOf(ConfigurationError);
    expect(badSchema.message).to.contain('schema must be a lower-case SQL identifier');
    const down = await rejection(migrateA2ADatabase({ url: 'postgres://postgres@127.0.0.1:1/test' }));
    expect(down).to.be.instanceOf(StoreError);
    expect(down.message).to.match(/^migrateA2ADatabase could not prepare schema .*ECONNREFUSED/s);
    const long = await rejection(migrateA2ADatabase({ url: DATABASE_URL, schema: prefix, taskTable: 'a'.repeat(38) }));
    expect(long).to.be.instanceOf(ConfigurationError);
    expect(long.message).to.contain('at most 37 characters');
  });

  it('a push config registered on A is listed on B and delivered by B, which continues the task A started', async () => {
    const hook = await startWebhook();
    try {
      const config = { tenant: '', id: '', taskId: '', url: hook.url, token: 'secret-b', authentication: undefined };
      const asked = await a.sendMessage({
        tenant: '',
        message: userMessage('call delete_file {"path":"/tmp/a.txt"}'),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: config, returnImmediately: false },
        metadata: undefined,
      });
      if (!('id' in asked)) throw new Error('expected a task');
      expect(asked.status?.state).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
      const listed = await b.listTaskPushNotificationConfig({ tenant: '', taskId: asked.id, pageSize: 10, pageToken: '' });
      expect(listed.configs.map((c) => [c.url, c.token])).to.deep.equal([[hook.url, 'secret-b']]);

      const done = await send(b, 'approve', asked.contextId, asked.id);
      expect(done.id).to.equal(asked.id);
      expect(done.status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
      expect(answer(done)).to.contain('delete_file returned: deleted /tmp/a.txt');
      // B ran the approved turn, so B sent the completion, to the webhook registered on A.
      await hook.completed;
      expect(hook.received.every((r) => r.token === 'secret-b')).to.equal(true);
      expect(await state(a, asked.id)).to.equal(TaskState.TASK_STATE_COMPLETED);
    } finally {
      await hook.close();
    }
  });

  // Last: it kills instance A.
  it("the lease works over the SDK's store: a task of a killed instance turns failed on the other, which notifies its webhook; the context goes on", async () => {
    const hook = await startWebhook();
    try {
      await killMidTask(emulator, a, b, instances[0]!, instances[1]!, hook);
    } finally {
      await hook.close();
    }
  });
});

for (const store of ['redis', 'postgres'] as const) {
  withService(`${store} A2A context store`, store === 'redis' ? redisUp : postgresUp, 'start the server (see test/stores/services.ts)', () => {
    const prefix = `${RUN_ID}_ctx_${store}`;
    let contexts: A2AContextStore & { close(): Promise<void> };
    beforeEach(() => {
      contexts = store === 'redis' ? new RedisA2AContextStore({ url: REDIS_URL, keyPrefix: `${prefix}:` }) : new PostgresA2AContextStore({ connectionString: DATABASE_URL, schema: prefix });
    });
    afterEach(() => contexts.close());
    after(async () => {
      if (store === 'postgres') await dropSchema(prefix);
    });

    it('saves with a version check, keeps the first owner, refuses a stale save and keeps the stored turn', async () => {
      const thread = { $type: 'service', version: 1, provider: 'x', serviceThreadId: 't' };
      const id = randomUUID();
      expect(await contexts.load(id)).to.equal(undefined);
      const v1 = await contexts.save(id, thread, undefined, 'alice');
      const v2 = await contexts.save(id, { ...thread, serviceThreadId: 'second' }, v1, 'bob');
      expect(v2).to.equal(v1 + 1);
      const stale = await contexts.save(id, { ...thread, serviceThreadId: 'stale' }, v1, 'alice').catch((e: unknown) => e);
      expect(stale).to.be.instanceOf(ThreadConflictError);
      expect(await contexts.save(id, thread, undefined, 'bob').catch((e: unknown) => e)).to.be.instanceOf(ThreadConflictError);
      expect(await contexts.load(id)).to.deep.equal({ thread: { ...thread, serviceThreadId: 'second' }, version: v2, owner: 'alice' });
      await contexts.delete(id);
      expect(await contexts.load(id)).to.equal(undefined);
    });
  });
}

withService('PostgresTaskStore', postgresUp, 'start PostgreSQL (see test/stores/services.ts)', () => {
  const prefix = `${RUN_ID}_tasks`;
  after(() => dropSchema(prefix));

  it('saves, loads and lists tasks as the SDK reads them, newest first, paged', async () => {
    const tasks = new PostgresTaskStore({ connectionString: DATABASE_URL, schema: prefix });
    try {
      const contextId = randomUUID();
      const made: Task[] = [];
      for (let i = 0; i < 3; i++) {
        const task: Task = {
          id: randomUUID(),
          contextId,
          status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() },
          artifacts: [{ artifactId: 'r', name: 'response', description: '', parts: userMessage(`answer ${i}`).parts, metadata: undefined, extensions: [] }],
          history: [userMessage(`question ${i}`, { contextId })],
          metadata: undefined,
        };
        await tasks.save(task);
        made.push(task);
      }
      const loaded = await tasks.load(made[0]!.id);
      expect(loaded?.id).to.equal(made[0]!.id);
      expect(partsText(loaded?.artifacts[0]?.parts)).to.equal('answer 0');
      expect(partsText(loaded?.history[0]?.parts)).to.equal('question 0');
      const page = await tasks.list({ tenant: '', contextId, status: 0, pageSize: 2, pageToken: '', historyLength: 0, includeArtifacts: false, statusTimestampAfter: undefined });
      expect(page.tasks.map((t) => t.id)).to.deep.equal([made[2]!.id, made[1]!.id]);
      expect(page.totalSize).to.equal(3);
      const rest = await tasks.list({ tenant: '', contextId, status: 0, pageSize: 2, pageToken: page.nextPageToken, historyLength: 0, includeArtifacts: true, statusTimestampAfter: undefined });
      expect(rest.tasks.map((t) => t.id)).to.deep.equal([made[0]!.id]);
      expect(rest.nextPageToken).to.equal('');
      expect(await tasks.load('missing')).to.equal(undefined);
    } finally {
      await tasks.close();
    }
  });
});

/**
 * One atomic renewal (renewTaskLease) over a real table: it applies only while the task runs
 * under that instance's lease, and a LeasedTaskStore using it never renews over a cancel.
 */
async function checkAtomicRenewal(store: TaskStore, renewal: TaskLeaseRenewal): Promise<void> {
  const context = new ServerCallContext();
  const movedOn: string[] = [];
  const leased = new LeasedTaskStore(store, { leaseMs: 600, renewIntervalMs: 100, renewal, onMovedOn: (t) => movedOn.push(t.id), logger: { warn: () => {}, error: () => {} } });
  try {
    const contextId = randomUUID();
    const task: Task = {
      id: randomUUID(),
      contextId,
      status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [userMessage('Tell me a story', { contextId })],
      metadata: undefined,
    };
    await leased.save(task, context);
    const lease = () => store.load(task.id, context).then((t) => t?.metadata?.['skein.lease'] as { instance: string; expiresAt: number } | undefined);
    const first = (await lease())!;
    expect(first.instance).to.equal(leased.instanceId);
    expect(await renewal.renewTaskLease(task.id, 'another-instance', Date.now() + 60_000, context)).to.equal(false);
    await until(async () => (await lease())!.expiresAt > first.expiresAt);
    expect((await leased.load(task.id, context))?.status?.state).to.equal(TaskState.TASK_STATE_WORKING);

    // Canceled through another instance: the next renewal finds it so, writes nothing and reports it.
    await store.save({ ...task, status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() } }, context);
    await until(() => movedOn.length > 0);
    expect(movedOn).to.deep.equal([task.id]);
    expect(await renewal.renewTaskLease(task.id, leased.instanceId, Date.now() + 60_000, context)).to.equal(false);
    expect((await store.load(task.id, context))?.status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
  } finally {
    leased.close();
  }
}

withService('Atomic lease renewal', postgresUp, 'start PostgreSQL (see test/stores/services.ts)', () => {
  const prefix = `${RUN_ID}_leases`;
  after(() => dropSchema(prefix));

  it("PostgresTaskStore.renewTaskLease: one UPDATE, only while the task runs under that lease; never over a cancel", async () => {
    const tasks = new PostgresTaskStore({ connectionString: DATABASE_URL, schema: prefix });
    try {
      await checkAtomicRenewal(tasks, tasks);
    } finally {
      await tasks.close();
    }
  });

  it("sdkDatabaseLeaseRenewal does the same for the SDK's DatabaseTaskStore", async () => {
    await migrateA2ADatabase({ url: DATABASE_URL, schema: prefix });
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: DATABASE_URL, options: `-c search_path=${prefix}`, max: 2 }) }) });
    try {
      await checkAtomicRenewal(new DatabaseTaskStore(db), sdkDatabaseLeaseRenewal(db));
    } finally {
      await db.destroy();
    }
  });

  it('sdkDatabaseLeaseRenewal refuses a table name it cannot quote', () => {
    const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: DATABASE_URL }) }) });
    expect(() => sdkDatabaseLeaseRenewal(db, { tableName: 'tasks; DROP TABLE x' })).to.throw(ConfigurationError, /tableName must be a table name or schema.table/);
    void db.destroy();
  });
});
