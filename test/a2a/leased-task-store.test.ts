import 'reflect-metadata';
import { type Task, TaskState } from '@a2a-js/sdk';
import { InMemoryTaskStore, ServerCallContext } from '@a2a-js/sdk/server';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { ClientFactory } from '@a2a-js/sdk/client';
import { ChatAgent, ConfigurationError, tool } from 'skein';
import { A2AServer, InMemoryA2AContextStore, LeasedTaskStore, TASK_LEASE_METADATA_KEY, partsText } from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { z } from 'zod';
import { until } from '../support/async-expectations.js';
import { userMessage } from './remote-fixtures.js';

const LEASE = { leaseMs: 300, renewIntervalMs: 50 };
const context = new ServerCallContext();

function task(state: TaskState, contextId = randomUUID()): Task {
  const id = randomUUID();
  return {
    id,
    contextId,
    status: { state, message: undefined, timestamp: new Date().toISOString() },
    artifacts: [{ artifactId: 'r', name: 'response', description: '', parts: userMessage('half an answer').parts, metadata: undefined, extensions: [] }],
    history: [userMessage('Tell me a story', { contextId, taskId: id })],
    metadata: { mine: 'kept' },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Instances sharing one store; each logs to its own list. */
function instances(shared: InMemoryTaskStore, count: number) {
  return Array.from({ length: count }, () => {
    const errors: string[] = [];
    const store = new LeasedTaskStore(shared, { ...LEASE, logger: { warn: () => {}, error: (m) => errors.push(m) } });
    return { store, errors };
  });
}

describe('LeasedTaskStore: leases on running tasks, over any TaskStore', () => {
  let stores: LeasedTaskStore[] = [];
  afterEach(() => stores.forEach((s) => s.close()));

  it('a task stays working while its holder renews; once renewals stop it is failed (instance-lost) for every reader, and saved so', async () => {
    const shared = new InMemoryTaskStore();
    const [a, b, c] = instances(shared, 3);
    stores = [a!.store, b!.store, c!.store];
    const running = task(TaskState.TASK_STATE_WORKING);
    await a!.store.save(running, context);

    await sleep(3 * LEASE.leaseMs);
    const seen = await b!.store.load(running.id, context);
    expect(seen?.status?.state).to.equal(TaskState.TASK_STATE_WORKING);
    // The lease is the store's business: readers see the task's own metadata only.
    expect(seen?.metadata).to.deep.equal({ mine: 'kept' });

    a!.store.close(); // the holder dies: no more renewals
    await until(async () => (await b!.store.load(running.id, context))?.status?.state === TaskState.TASK_STATE_FAILED);
    const failed = (await c!.store.load(running.id, context))!;
    expect(failed.status?.state).to.equal(TaskState.TASK_STATE_FAILED);
    const metadata = failed.status?.message?.metadata as { errorId: string; reason: string };
    expect(metadata.reason).to.equal('instance-lost');
    expect(partsText(failed.status?.message?.parts)).to.equal(`The server instance running this task stopped; send your message again (error id ${metadata.errorId}).`);
    // What the task had is kept; the failure is the last history entry.
    expect(partsText(failed.artifacts[0]?.parts)).to.equal('half an answer');
    expect(failed.history.map((m) => partsText(m.parts))).to.deep.equal(['Tell me a story', partsText(failed.status?.message?.parts)]);
    const stored = await shared.load(running.id, context);
    expect(stored?.status?.state).to.equal(TaskState.TASK_STATE_FAILED);
    expect(stored?.metadata?.[TASK_LEASE_METADATA_KEY]).to.equal(undefined);
    expect(b!.errors.join('\n')).to.contain(`error id ${metadata.errorId}`);
  });

  it('readers failing the same lost task at once write the same failed task', async () => {
    const shared = new InMemoryTaskStore();
    const [a, b, c] = instances(shared, 3);
    stores = [a!.store, b!.store, c!.store];
    const running = task(TaskState.TASK_STATE_SUBMITTED);
    await a!.store.save(running, context);
    a!.store.close();
    await sleep(LEASE.leaseMs + 50);
    const [fromB, fromC] = await Promise.all([b!.store.load(running.id, context), c!.store.load(running.id, context)]);
    expect(fromB?.status?.state).to.equal(TaskState.TASK_STATE_FAILED);
    expect(fromC).to.deep.equal(fromB);
    expect(await shared.load(running.id, context)).to.deep.equal(fromB);
  });

  it('ListTasks shows a lost task failed (as the page asked for it), and leaves it out of a page filtered on working', async () => {
    const shared = new InMemoryTaskStore();
    const [a, b] = instances(shared, 2);
    stores = [a!.store, b!.store];
    const contextId = randomUUID();
    const lost = task(TaskState.TASK_STATE_WORKING, contextId);
    const done = task(TaskState.TASK_STATE_COMPLETED, contextId);
    await a!.store.save(lost, context);
    await a!.store.save(done, context);
    a!.store.close();
    await sleep(LEASE.leaseMs + 50);
    const request = { tenant: '', contextId, status: TaskState.TASK_STATE_WORKING, pageSize: 10, pageToken: '', historyLength: 0, includeArtifacts: false, statusTimestampAfter: undefined };
    expect((await b!.store.list(request, context)).tasks).to.deep.equal([]);
    const page = await b!.store.list({ ...request, status: 0 }, context);
    expect(page.tasks.map((t) => [t.id, t.status?.state])).to.have.deep.members([
      [lost.id, TaskState.TASK_STATE_FAILED],
      [done.id, TaskState.TASK_STATE_COMPLETED],
    ]);
    // The page left artifacts out; the stored failed task still has them.
    expect(page.tasks.find((t) => t.id === lost.id)?.artifacts).to.deep.equal([]);
    expect(partsText((await shared.load(lost.id, context))?.artifacts[0]?.parts)).to.equal('half an answer');
  });

  it('a task canceled on another instance is not renewed over; a task waiting for input holds no lease', async () => {
    const shared = new InMemoryTaskStore();
    const [a, b] = instances(shared, 2);
    stores = [a!.store, b!.store];
    const running = task(TaskState.TASK_STATE_WORKING);
    await a!.store.save(running, context);
    const canceled = { ...running, status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() } };
    await b!.store.save(canceled, context);
    await sleep(3 * LEASE.renewIntervalMs);
    expect((await shared.load(running.id, context))?.status?.state).to.equal(TaskState.TASK_STATE_CANCELED);

    const waiting = task(TaskState.TASK_STATE_INPUT_REQUIRED);
    await a!.store.save(waiting, context);
    expect((await shared.load(waiting.id, context))?.metadata?.[TASK_LEASE_METADATA_KEY]).to.equal(undefined);
    await sleep(LEASE.leaseMs + 50);
    expect((await b!.store.load(waiting.id, context))?.status?.state).to.equal(TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('the instance running a task learns it was canceled elsewhere on its next read of it, before any renewal', async () => {
    const shared = new InMemoryTaskStore();
    const movedOn: (TaskState | undefined)[] = [];
    const a = new LeasedTaskStore(shared, { leaseMs: 60_000, onMovedOn: (t) => movedOn.push(t.status?.state), logger: { warn: () => {}, error: () => {} } });
    const [b] = instances(shared, 1);
    stores = [a, b!.store];
    const running = task(TaskState.TASK_STATE_WORKING);
    await a.save(running, context);
    await b!.store.save({ ...running, status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() } }, context);
    expect(movedOn).to.deep.equal([]);
    expect((await a.load(running.id, context))?.status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
    expect(movedOn).to.deep.equal([TaskState.TASK_STATE_CANCELED]);
    // Its own final save releases a task without a report.
    const own = task(TaskState.TASK_STATE_WORKING);
    await a.save(own, context);
    await a.save({ ...own, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() } }, context);
    await a.load(own.id, context);
    expect(movedOn).to.have.length(1);
  });

  it('an instance that stalled past its own lease and reads its task fails it too, and is told to stop running it', async () => {
    const shared = new InMemoryTaskStore();
    const movedOn: Task[] = [];
    const a = new LeasedTaskStore(shared, { ...LEASE, onMovedOn: (t) => movedOn.push(t), logger: { warn: () => {}, error: () => {} } });
    stores = [a];
    const running = task(TaskState.TASK_STATE_WORKING);
    await a.save(running, context);
    // A stall: the event loop is blocked past the lease, so no renewal runs.
    const stallEnd = Date.now() + LEASE.leaseMs + 50;
    while (Date.now() < stallEnd) {
      // busy: nothing else runs
    }
    const seen = await a.load(running.id, context);
    expect(seen?.status?.state).to.equal(TaskState.TASK_STATE_FAILED);
    expect(movedOn.map((t) => [t.id, t.status?.state])).to.deep.equal([[running.id, TaskState.TASK_STATE_FAILED]]);
  });

  it('a task saved without a lease (by a server without leases) is left as it is', async () => {
    const shared = new InMemoryTaskStore();
    const [b] = instances(shared, 1);
    stores = [b!.store];
    const running = task(TaskState.TASK_STATE_WORKING);
    await shared.save(running, context);
    await sleep(LEASE.leaseMs + 50);
    expect((await b!.store.load(running.id, context))?.status?.state).to.equal(TaskState.TASK_STATE_WORKING);
  });

  it('refuses a renewal interval not below the lease, or a lease that is not a positive number, saying what to pass', () => {
    const shared = new InMemoryTaskStore();
    expect(() => new LeasedTaskStore(shared, { leaseMs: 1000, renewIntervalMs: 1000 })).to.throw(ConfigurationError, /renewIntervalMs must be positive and below leaseMs \(1000\)/);
    expect(() => new LeasedTaskStore(shared, { leaseMs: -5 })).to.throw(ConfigurationError, /leaseMs must be a positive number/);
    const defaults = new LeasedTaskStore(shared);
    expect([defaults.leaseMs, defaults.renewIntervalMs]).to.deep.equal([30_000, 10_000]);
    expect(new LeasedTaskStore(shared, { leaseMs: 900 }).renewIntervalMs).to.equal(300);
  });
});

describe('A2AServer with leases: a task canceled through another instance stops running where it runs', () => {
  it("B cancels A's working task: A's run is aborted within a renewal, A's caller sees canceled, the context goes on", async () => {
    const emulator = await Emulator.start();
    let started = false;
    let aborted = false;
    // A tool that runs until its run is aborted.
    const wait = tool({
      name: 'wait',
      description: 'Waits',
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise((resolve) => {
          started = true;
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve('stopped');
          });
        }),
    });
    const agent = new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }), name: 'assistant', tools: [wait] });
    // Two instances in one process, sharing their stores as two processes would share a database.
    const taskStore = new InMemoryTaskStore();
    const contextStore = new InMemoryA2AContextStore();
    const options = { agent, taskStore, contextStore, taskLease: LEASE, logger: { warn: () => {}, error: () => {} } };
    const [serverA, serverB] = [new A2AServer(options), new A2AServer(options)];
    await Promise.all([serverA.listen(), serverB.listen()]);
    try {
      const a = await new ClientFactory().createFromUrl(serverA.url!);
      const b = await new ClientFactory().createFromUrl(serverB.url!);
      const first = await a.sendMessage({ tenant: '', message: userMessage('My name is Ada'), configuration: undefined, metadata: undefined });
      const contextId = 'id' in first ? first.contextId : '';
      const states: (TaskState | undefined)[] = [];
      let taskId = '';
      const streamed = (async () => {
        for await (const event of a.sendMessageStream({ tenant: '', message: userMessage('call wait {}', { contextId }), configuration: undefined, metadata: undefined })) {
          const payload = event.payload;
          if (payload?.$case === 'task') taskId = payload.value.id;
          if (payload?.$case === 'statusUpdate') states.push(payload.value.status?.state);
        }
      })();
      await until(() => started && taskId !== '');
      expect((await b.cancelTask({ tenant: '', id: taskId, metadata: undefined })).status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
      await until(() => aborted);
      await streamed;
      expect(states.at(-1)).to.equal(TaskState.TASK_STATE_CANCELED);
      expect((await a.getTask({ tenant: '', id: taskId, historyLength: 0 })).status?.state).to.equal(TaskState.TASK_STATE_CANCELED);
      const next = await b.sendMessage({ tenant: '', message: userMessage("What's my name?", { contextId }), configuration: undefined, metadata: undefined });
      expect('id' in next && next.artifacts.map((x) => partsText(x.parts)).join('')).to.contain('Ada');
    } finally {
      await serverA.close();
      await serverB.close();
      await emulator.stop();
    }
  });
});
