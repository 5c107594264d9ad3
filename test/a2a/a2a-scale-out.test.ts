import 'reflect-metadata';
import { type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory } from '@a2a-js/sdk/client';
import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ThreadConflictError } from 'skein';
import { type A2AContextStore, PostgresA2AContextStore, PostgresTaskStore, RedisA2AContextStore, partsText } from 'skein/a2a';
import { Emulator } from 'skein/testing';
import { userMessage } from './remote-fixtures.js';
import { until } from '../support/async-expectations.js';
import { DATABASE_URL, REDIS_URL, RUN_ID, dropSchema, postgresAvailable, redisAvailable, withService } from '../stores/services.js';

const INSTANCE = fileURLToPath(new URL('./a2a-instance.js', import.meta.url));

async function send(client: Client, text: string, contextId = ''): Promise<Task> {
  const result = await client.sendMessage({ tenant: '', message: userMessage(text, { contextId }), configuration: undefined, metadata: undefined });
  if ('messageId' in result) throw new Error('expected a task');
  return result;
}

function answer(task: Task): string {
  return task.artifacts.map((a) => partsText(a.parts)).join('');
}

/** Starts an A2AServer in a child process; resolves with its base URL. */
function startInstance(env: Record<string, string>, children: ChildProcess[]): Promise<string> {
  const child = spawn(process.execPath, [INSTANCE], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolve((JSON.parse(line!) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`the A2A instance exited (code ${code}) before listening`)));
  });
}

const [redisUp, postgresUp] = await Promise.all([redisAvailable(), postgresAvailable()]);

for (const store of ['redis', 'postgres'] as const) {
  const up = store === 'redis' ? redisUp && postgresUp : postgresUp;
  withService(`A2A scale-out: two A2AServer processes on ${store} contexts and PostgreSQL tasks, the SDK client alternating`, up, 'start Redis and PostgreSQL (see test/stores/services.ts)', () => {
    const prefix = `${RUN_ID}_a2a_${store}`;
    const children: ChildProcess[] = [];
    let emulator: Emulator;
    let a: Client;
    let b: Client;

    before(async () => {
      emulator = await Emulator.start();
      const env = { EMULATOR_URL: emulator.openaiBaseURL, STORE: store, PREFIX: prefix, REDIS_URL, DATABASE_URL };
      const [urlA, urlB] = await Promise.all([startInstance(env, children), startInstance(env, children)]);
      expect(urlA).not.to.equal(urlB);
      a = await new ClientFactory().createFromUrl(urlA);
      b = await new ClientFactory().createFromUrl(urlB);
    });
    after(async () => {
      for (const child of children) child.kill();
      await emulator.stop();
      await dropSchema(prefix);
    });

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

    // Last: it kills instance A.
    it('an instance killed mid-task leaves the task visible (working) on the other, which cancels it; the context goes on', async () => {
      const first = await send(a, 'My name is Ada');
      emulator.injectFault({ kind: 'stall-stream', afterEvents: 1, times: 1 });
      const started = await a.sendMessage({
        tenant: '',
        message: userMessage('Tell me a story', { contextId: first.contextId }),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
        metadata: undefined,
      });
      const taskId = 'id' in started ? started.id : '';
      await until(async () => (await b.getTask({ tenant: '', id: taskId, historyLength: 0 })).status?.state === TaskState.TASK_STATE_WORKING);
      children[0]!.kill('SIGKILL');
      await new Promise((resolve) => children[0]!.once('exit', resolve));

      expect((await b.getTask({ tenant: '', id: taskId, historyLength: 0 })).status?.state).to.equal(TaskState.TASK_STATE_WORKING);
      expect((await b.cancelTask({ tenant: '', id: taskId, metadata: undefined })).status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
      const next = await send(b, "What's my name?", first.contextId);
      expect(answer(next)).to.contain('Ada');
    });
  });
}

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
