import 'reflect-metadata';
import { expect } from 'chai';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import sinon from 'sinon';
import {
  AbortError,
  type AgentRunResponseUpdate,
  AgentThread,
  ChatAgent,
  ConnectionError,
  InMemoryChatMessageStoreFactory,
  SerializationError,
  ThreadCompatibilityError,
  ThreadConflictError,
  agentToken,
  createContainer,
} from 'skein';
import {
  A2AAgent,
  A2AAgentCardError,
  A2AAuthRequiredError,
  A2ARunResponse,
  A2AServer,
  A2ATaskFailedError,
  A2ATaskRejectedError,
  InMemoryA2AContextStore,
  a2aPlugin,
} from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { ScriptedExecutor, startSdkServer } from './remote-fixtures.js';

function chatAgent(emulator: Emulator): ChatAgent {
  return new ChatAgent({
    chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }),
    name: 'assistant',
    description: 'Remembers what you tell it.',
  });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

/** JSON round trip: what another process would read. */
function overTheWire<T>(value: T): unknown {
  return JSON.parse(JSON.stringify(value));
}

describe('A2A: a Skein agent served over A2A and called by A2AAgent', () => {
  let emulator: Emulator;
  let server: A2AServer;
  let remote: A2AAgent;
  let logged: { warnings: string[]; errors: { message: string; error: unknown }[] };

  beforeEach(async () => {
    emulator = await Emulator.start();
    logged = { warnings: [], errors: [] };
    server = new A2AServer({
      agent: chatAgent(emulator),
      logger: { warn: (message) => logged.warnings.push(message), error: (message, error) => logged.errors.push({ message, error }) },
      skills: [{ id: 'memory', name: 'Memory', description: 'Remembers your name', examples: ['My name is Ada'] }],
    });
    await server.listen();
    remote = new A2AAgent({ url: server.agentCardUrl!, name: 'remote' });
  });

  afterEach(async () => {
    await server.close();
    await emulator.stop();
  });

  it('serves an agent card with skills, streaming and the JSON-RPC endpoint', async () => {
    const card = await remote.getAgentCard();
    expect(card.name).to.equal('assistant');
    expect(card.description).to.equal('Remembers what you tell it.');
    expect(card.capabilities?.streaming).to.equal(true);
    expect(card.skills.map((s) => [s.id, s.name, s.examples])).to.deep.equal([['memory', 'Memory', ['My name is Ada']]]);
    expect(card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion, i.url])).to.deep.equal([
      ['JSONRPC', '1.0', `${server.url}/a2a/jsonrpc`],
      ['HTTP+JSON', '1.0', `${server.url}/a2a/rest`],
      ['JSONRPC', '0.3', `${server.url}/a2a/jsonrpc`],
      ['HTTP+JSON', '0.3', `${server.url}/a2a/rest`],
    ]);
  });

  it('keeps multi-turn memory on one thread through the context id', async () => {
    const thread = remote.getNewThread();
    const first = await remote.run('My name is Ada', { thread });
    expect(first.text).to.not.equal('');
    const contextId = thread.serviceThreadId;
    expect(contextId).to.be.a('string').and.not.equal('');
    expect(first.details.conversationId).to.equal(contextId);

    const second = await remote.run("What's my name?", { thread });
    expect(second.text).to.contain('Ada');
    expect(thread.serviceThreadId).to.equal(contextId);
    // The emulated model saw the first turn: the hosted agent's thread for the context was kept.
    const stored = await server.contextStore.load(contextId!);
    expect(stored?.thread.store?.messages).to.have.length(4);
  });

  it('forgets nothing across a serialize / resume in a new agent instance', async () => {
    const thread = remote.getNewThread();
    await remote.run('My name is Grace', { thread });
    const saved = overTheWire(await thread.serialize());
    expect(saved).to.deep.equal({ $type: 'service', version: 1, provider: 'a2a', agent: 'remote', serviceThreadId: thread.serviceThreadId });

    const elsewhere = new A2AAgent({ url: server.agentCardUrl!, name: 'remote' });
    const resumed = await elsewhere.deserializeThread(saved);
    const answer = await elsewhere.run("What's my name?", { thread: resumed });
    expect(answer.text).to.contain('Grace');
    expect(resumed.serviceThreadId).to.equal(thread.serviceThreadId);
  });

  it('does not mix conversations: each thread is its own context', async () => {
    const ada = remote.getNewThread();
    const bob = remote.getNewThread();
    await remote.run('My name is Ada', { thread: ada });
    await remote.run('My name is Bob', { thread: bob });
    expect(ada.serviceThreadId).to.not.equal(bob.serviceThreadId);
    expect((await remote.run("What's my name?", { thread: ada })).text).to.contain('Ada');
    expect((await remote.run("What's my name?", { thread: bob })).text).to.contain('Bob');
  });

  it('streams the reply as text deltas and updates the thread when the stream completes', async () => {
    const thread = remote.getNewThread();
    await remote.run('My name is Linus', { thread });
    const updates = await lastValueFrom(remote.runStream("What's my name?", { thread }).pipe(toArray()));
    const streamed = updates.map((u) => u.text).join('');
    expect(streamed).to.contain('Linus');
    expect(updates.length).to.be.greaterThan(1);
    expect(updates.every((u) => u.role === 'assistant' && u.authorName === 'remote')).to.equal(true);
    // The emulator's stream was really used by the hosted agent.
    const requests = emulator.requestsTo('/v1/chat/completions');
    expect(requests).to.have.length(2);
    expect(requests.every((r) => (r.body as { stream?: boolean }).stream === true)).to.equal(true);
    const again = await remote.run('what did we talk about', { thread });
    expect(again.text).to.contain('Linus');
  });

  it('is cold: nothing is sent until subscription, one request per subscription', async () => {
    const thread = remote.getNewThread();
    const stream = remote.runStream('My name is Ada', { thread });
    expect(emulator.requestsTo('/v1/chat/completions')).to.have.length(0);
    await lastValueFrom(stream);
    await lastValueFrom(remote.runStream("What's my name?", { thread }));
    expect(emulator.requestsTo('/v1/chat/completions')).to.have.length(2);
  });

  it('follows a task by polling GetTask in poll mode', async () => {
    const polling = new A2AAgent({ url: server.agentCardUrl!, name: 'remote', mode: 'poll', pollIntervalMs: 20 });
    const thread = polling.getNewThread();
    await polling.run('My name is Ada', { thread });
    const answer = await polling.run("What's my name?", { thread });
    expect(answer.text).to.contain('Ada');
    expect(answer).to.be.instanceOf(A2ARunResponse);
    expect((answer as A2ARunResponse).taskState).to.equal('completed');
  });

  it('reports a remote failure as A2ATaskFailedError and leaves the thread unchanged', async () => {
    const thread = remote.getNewThread();
    await remote.run('My name is Ada', { thread });
    const before = await thread.serialize();
    emulator.injectFault({ kind: 'status', status: 400, message: 'model is on fire' });
    const error = await rejection(remote.run('Hello again', { thread }));
    expect(error).to.be.instanceOf(A2ATaskFailedError);
    const failed = error as A2ATaskFailedError;
    expect(failed.state).to.equal('failed');
    expect(failed.provider).to.equal('a2a');
    expect(failed.contextId).to.equal(thread.serviceThreadId);
    // The remote caller gets an error id, never the internal error; the server's log has both.
    const errorId = /error id ([0-9a-f-]{36})/.exec(failed.statusText ?? '')?.[1];
    expect(errorId, failed.statusText).to.be.a('string');
    expect(failed.statusText).not.to.contain('model is on fire');
    expect(failed.statusText).not.to.contain('openai');
    expect(failed.statusText).to.match(/^The agent could not complete this task/);
    expect(logged.errors).to.have.length(1);
    expect(logged.errors[0]!.message).to.contain(errorId);
    expect(String(logged.errors[0]!.error)).to.contain('model is on fire');
    expect(await thread.serialize()).to.deep.equal(before);
    // The failed turn was not recorded on the server either: memory continues cleanly.
    expect((await remote.run("What's my name?", { thread })).text).to.contain('Ada');
    expect((await server.contextStore.load(thread.serviceThreadId!))?.thread.store?.messages).to.have.length(4);
  });

  it('tells the remote caller a rate limit is one (retry later), with an error id and nothing internal', async () => {
    emulator.injectFault({ kind: 'status', status: 429, retryAfterSeconds: 0, message: 'org quota for key sk-live-123 exceeded' });
    const error = (await rejection(remote.run('Hello'))) as A2ATaskFailedError;
    expect(error).to.be.instanceOf(A2ATaskFailedError);
    expect(error.statusText).to.match(/^The agent's model service is rate limiting requests; retry later \(error id [0-9a-f-]{36}\)\.$/);
    expect(error.statusText).not.to.contain('sk-live');
    expect(String(logged.errors[0]?.error)).to.contain('sk-live-123');
  });

  it('cancels the remote task (and the hosted model call) when the stream is unsubscribed', async () => {
    const thread = remote.getNewThread();
    await remote.run('My name is Ada', { thread });
    emulator.injectFault({ kind: 'stall-stream', afterEvents: 2 });
    const first: AgentRunResponseUpdate = await firstValueFrom(remote.runStream('Tell me a story', { thread }));
    expect(first.text).to.not.equal('');
    // firstValueFrom unsubscribed: the client cancels the task, the server aborts its agent run.
    await emulator.waitForAbortedStream();
    expect(emulator.abortedStreams).to.be.greaterThan(0);
    expect((await remote.run("What's my name?", { thread })).text).to.contain('Ada');
  });

  it('cancels the remote task when a run is aborted through its signal', async () => {
    const thread = remote.getNewThread();
    emulator.injectFault({ kind: 'stall-stream', afterEvents: 2 });
    const controller = new AbortController();
    const updates: string[] = [];
    const run = new Promise<void>((resolve, reject) => {
      remote.runStream('Tell me a story', { thread, signal: controller.signal }).subscribe({
        next: (u) => {
          updates.push(u.text);
          controller.abort();
        },
        error: reject,
        complete: resolve,
      });
    });
    const error = await rejection(run);
    expect(error).to.be.instanceOf(AbortError);
    await emulator.waitForAbortedStream();
    expect(thread.serviceThreadId).to.equal(undefined);
  });

  it('shares conversations between server instances through one context store', async () => {
    const shared = new InMemoryA2AContextStore();
    const agent = chatAgent(emulator);
    const a = new A2AServer({ agent, contextStore: shared });
    const b = new A2AServer({ agent, contextStore: shared });
    await a.listen();
    await b.listen();
    try {
      const viaA = new A2AAgent({ url: a.agentCardUrl!, name: 'cluster' });
      const viaB = new A2AAgent({ url: b.agentCardUrl!, name: 'cluster' });
      const thread = viaA.getNewThread();
      await viaA.run('My name is Ada', { thread });
      const answer = await viaB.run("What's my name?", { thread });
      expect(answer.text).to.contain('Ada');
      expect(shared.size).to.equal(1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('keeps new hosted threads in the configured ChatMessageStoreFactory', async () => {
    const factory = new InMemoryChatMessageStoreFactory();
    const create = sinon.spy(factory, 'create');
    const hosted = new A2AServer({ agent: chatAgent(emulator), chatMessageStoreFactory: factory });
    await hosted.listen();
    try {
      const client = new A2AAgent({ url: hosted.agentCardUrl!, name: 'hosted' });
      const thread = client.getNewThread();
      await client.run('My name is Ada', { thread });
      expect((await client.run("What's my name?", { thread })).text).to.contain('Ada');
      expect(create.callCount).to.equal(1);
    } finally {
      sinon.restore();
      await hosted.close();
    }
  });

  it('builds A2A agents from container config', async () => {
    const container = createContainer({ plugins: [a2aPlugin()], agents: { helper: { client: 'a2a', url: server.agentCardUrl! } } });
    const agent = container.get(agentToken('helper'));
    expect(agent).to.be.instanceOf(A2AAgent);
    const thread = agent.getNewThread();
    await agent.run('My name is Ada', { thread });
    expect((await agent.run("What's my name?", { thread })).text).to.contain('Ada');
    expect(thread.origin).to.deep.equal({ provider: 'a2a', agent: 'helper' });
  });
});

describe('A2A: tasks that ask for input, reject, need auth, or are canceled', () => {
  let executor: ScriptedExecutor;
  let remoteServer: Awaited<ReturnType<typeof startSdkServer>>;
  let remote: A2AAgent;

  beforeEach(async () => {
    executor = new ScriptedExecutor();
    remoteServer = await startSdkServer(executor);
    remote = new A2AAgent({ url: remoteServer.cardUrl, name: 'scripted' });
  });

  afterEach(async () => {
    await remoteServer.close();
  });

  for (const mode of ['stream', 'poll'] as const) {
    it(`continues a task that asked for input, across a serialize / resume (${mode})`, async () => {
      const agent = new A2AAgent({ url: remoteServer.cardUrl, name: 'scripted', mode, pollIntervalMs: 20 });
      const thread = agent.getNewThread();
      const question = (await agent.run("What's the weather?", { thread })) as A2ARunResponse;
      expect(question.inputRequired).to.equal(true);
      expect(question.text).to.contain('Which city?');
      const taskId = question.taskId!;
      expect(thread.state.a2a).to.deep.include({ taskId, artifactIds: ['note'] });

      const saved = overTheWire(await thread.serialize());
      const resumed = await new A2AAgent({ url: remoteServer.cardUrl, name: 'scripted', mode, pollIntervalMs: 20 }).deserializeThread(saved);
      const answer = (await agent.run('Paris', { thread: resumed })) as A2ARunResponse;
      expect(answer.inputRequired).to.equal(false);
      expect(answer.taskState).to.equal('completed');
      // Only this turn's artifact: the earlier "(looking up weather)" note is not repeated.
      expect(answer.text).to.equal('Weather in Paris: sunny');
      expect(executor.continuations).to.deep.equal([{ taskId, contextId: thread.serviceThreadId, text: 'Paris' }]);
      expect(resumed.state).to.deep.equal({});
    });
  }

  it('cancels the open task when an input-required thread is deleted', async () => {
    const thread = remote.getNewThread();
    const question = (await remote.run("What's the weather?", { thread })) as A2ARunResponse;
    await remote.deleteThread(thread);
    expect(executor.canceled).to.deep.equal([question.taskId]);
    expect(thread.state).to.deep.equal({});
  });

  it('turns a direct message reply into the response', async () => {
    const thread = remote.getNewThread();
    const reply = await remote.run('hello', { thread });
    expect(reply.text).to.equal('echo: hello');
    expect(thread.serviceThreadId).to.be.a('string');
  });

  it('maps a rejected task to A2ATaskRejectedError', async () => {
    const thread = remote.getNewThread();
    const error = await rejection(remote.run('please reject this', { thread }));
    expect(error).to.be.instanceOf(A2ATaskRejectedError);
    expect((error as A2ATaskRejectedError).statusText).to.equal('I only do weather.');
    expect(thread.serviceThreadId).to.equal(undefined);
  });

  it('maps auth-required to A2AAuthRequiredError without canceling the task', async () => {
    const error = await rejection(remote.run('auth please'));
    expect(error).to.be.instanceOf(A2AAuthRequiredError);
    expect((error as A2AAuthRequiredError).statusText).to.equal('Sign in first.');
    expect(executor.canceled).to.deep.equal([]);
  });

  it('cancels the remote task when run() is aborted', async () => {
    const controller = new AbortController();
    const started = executor.started();
    const canceled = executor.whenCanceled();
    const run = remote.run('hold on', { signal: controller.signal });
    const taskId = await started;
    controller.abort();
    expect(await rejection(run)).to.be.instanceOf(AbortError);
    expect(await canceled).to.equal(taskId);
    const task = await remoteServer.taskStore.load(taskId, { tenant: '', user: undefined } as never);
    expect(task?.status?.state).to.equal(5 /* TASK_STATE_CANCELED */);
  });
});

describe('A2A: bad input gives typed errors', () => {
  it('names a bad agent card URL (404)', async () => {
    const remoteServer = await startSdkServer(new ScriptedExecutor());
    try {
      const agent = new A2AAgent({ url: `${remoteServer.base}/no-such-card.json` });
      const error = await rejection(agent.run('hi'));
      expect(error).to.be.instanceOf(A2AAgentCardError);
      expect((error as A2AAgentCardError).status).to.equal(404);
      expect((error as Error).message).to.contain('no-such-card.json');
    } finally {
      await remoteServer.close();
    }
  });

  it('reports an unreachable agent card URL as a ConnectionError', async () => {
    const remoteServer = await startSdkServer(new ScriptedExecutor());
    const url = remoteServer.cardUrl;
    await remoteServer.close();
    const error = await rejection(new A2AAgent({ url }).getAgentCard());
    expect(error).to.be.instanceOf(ConnectionError);
    expect((error as Error).message).to.contain(url);
  });

  it('refuses a string that is not a URL', async () => {
    const error = await rejection(new A2AAgent({ url: 'not a url' }).run('hi'));
    expect(error).to.be.instanceOf(A2AAgentCardError);
  });

  it('refuses an A2A thread on a non-A2A agent, and a non-A2A thread on an A2A agent', async () => {
    const emulator = await Emulator.start();
    try {
      const chat = chatAgent(emulator);
      const a2a = new A2AAgent({ url: 'http://127.0.0.1:1/.well-known/agent-card.json', name: 'remote' });
      const a2aThread = new AgentThread({ origin: { provider: 'a2a', agent: 'remote' }, serviceThreadId: 'ctx-1' });
      expect(await rejection(chat.run('hi', { thread: a2aThread }))).to.be.instanceOf(ThreadCompatibilityError);
      expect(await rejection(a2a.run('hi', { thread: chat.getNewThread() }))).to.be.instanceOf(ThreadCompatibilityError);
      const chatThread = chat.getNewThread();
      await chat.run('My name is Ada', { thread: chatThread });
      expect(await rejection(a2a.deserializeThread(overTheWire(await chatThread.serialize())))).to.be.instanceOf(ThreadCompatibilityError);
      expect(await rejection(chat.deserializeThread(overTheWire(await a2aThread.serialize())))).to.be.instanceOf(ThreadCompatibilityError);
      const other = new AgentThread({ origin: { provider: 'a2a', agent: 'someone-else' }, serviceThreadId: 'ctx-2' });
      expect(await rejection(a2a.run('hi', { thread: other }))).to.be.instanceOf(ThreadCompatibilityError);
      // Nothing was sent to the model for the refused runs.
      expect(emulator.requestsTo('/v1/chat/completions')).to.have.length(1);
    } finally {
      await emulator.stop();
    }
  });

  it('names the bad field of a serialized A2A thread', async () => {
    const a2a = new A2AAgent({ url: 'http://127.0.0.1:1/.well-known/agent-card.json', name: 'remote' });
    const bad = { $type: 'service', version: 1, provider: 'a2a', agent: 'remote', serviceThreadId: 'ctx', state: { a2a: { taskId: 7, artifactIds: [] } } };
    const error = await rejection(a2a.deserializeThread(bad));
    expect(error).to.be.instanceOf(SerializationError);
    expect((error as SerializationError).path).to.equal('$.state.a2a.taskId');
    expect(bad.state.a2a.taskId).to.equal(7);
  });

  it('refuses a stale context save with ThreadConflictError and keeps the stored turn', async () => {
    const store = new InMemoryA2AContextStore();
    const thread = { $type: 'service', version: 1, provider: 'x', serviceThreadId: 't' };
    const v1 = await store.save('ctx', thread, undefined, '');
    await store.save('ctx', { ...thread, serviceThreadId: 'second' }, v1, '');
    expect(await rejection(store.save('ctx', { ...thread, serviceThreadId: 'stale' }, v1, ''))).to.be.instanceOf(ThreadConflictError);
    expect(await rejection(store.save('ctx', thread, undefined, ''))).to.be.instanceOf(ThreadConflictError);
    expect((await store.load('ctx'))?.thread.serviceThreadId).to.equal('second');
  });

  it('in-memory context store: copies in and out, a loaded context is plain data that changes nothing stored', async () => {
    const store = new InMemoryA2AContextStore();
    const thread = { $type: 'service', version: 1, provider: 'x', serviceThreadId: 't', state: { turns: [1] } };
    const version = await store.save('ctx', thread, undefined, 'alice');
    thread.state.turns.push(2); // the caller's object after the save

    const loaded = (await store.load('ctx'))!;
    expect(loaded).to.deep.equal({ thread: { ...thread, state: { turns: [1] } }, version, owner: 'alice' });
    expect(JSON.parse(JSON.stringify(loaded))).to.deep.equal({ thread: { ...thread, state: { turns: [1] } }, version, owner: 'alice' });
    (loaded.thread.state as { turns: number[] }).turns.push(3);

    const again = (await store.load('ctx'))!;
    expect(again.thread).to.deep.equal({ ...thread, state: { turns: [1] } });
    // The changed copy, saved, is what is stored (the change is not lost to a cached text).
    const next = await store.save('ctx', loaded.thread, again.version, 'bob');
    expect(await store.load('ctx')).to.deep.equal({ thread: { ...thread, state: { turns: [1, 3] } }, version: next, owner: 'alice' });
    loaded.thread = { ...thread, serviceThreadId: 'replaced' };
    expect(loaded.thread.serviceThreadId).to.equal('replaced');
  });
});
