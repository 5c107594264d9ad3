import { expect } from 'chai';
import OpenAI from 'openai';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import {
  AbortError,
  AgentThread,
  type AgentRunResponseUpdate,
  agentToken,
  createContainer,
  NotFoundError,
  SerializationError,
  ThreadCompatibilityError,
  tool,
} from 'skein';
import {
  AssistantDeletedError,
  AssistantRunError,
  AssistantRunTimeoutError,
  OpenAIAssistantAgent,
  OpenAIServiceConfiguration,
  openaiPlugin,
} from 'skein/openai';
import { emulatorPerTest } from '../support/emulator.js';
import { z } from 'zod';

const weather = tool({
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `sunny in ${city}`,
});
const time = tool({
  name: 'get_time',
  description: 'Time in a zone',
  parameters: z.object({ zone: z.string() }),
  execute: ({ zone }) => `12:00 in ${zone}`,
});
const broken = tool({
  name: 'explode',
  parameters: z.object({}),
  execute: () => {
    throw new Error('kaboom');
  },
});

/** The rejection of `promise`; fails the test when it resolves. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('OpenAIAssistantAgent against the emulator (real openai SDK)', () => {
  let client: OpenAI;

  const running = emulatorPerTest();
  beforeEach(() => {
    client = new OpenAI({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 });
  });

  const create = (extra: Partial<Parameters<typeof OpenAIAssistantAgent.create>[1]> = {}, tools = [weather, time, broken]) =>
    OpenAIAssistantAgent.create(client, { model: 'gpt-test', name: 'helper', instructions: 'Be brief.', ...extra }, { tools, polling: { intervalMs: 1 } });

  const runBodies = () => running.emulator.requests.filter((r) => r.method === 'POST' && /^\/v1\/threads\/[^/]+\/runs$/.test(r.path)).map((r) => r.body as Record<string, unknown>);

  describe('lifecycle', () => {
    it('creates an assistant with its function tools and sends the beta header on every call', async () => {
      const agent = await create();
      expect(agent.id).to.match(/^asst_/);
      expect(agent.definition.functions?.map((f) => f.name)).to.deep.equal(['get_weather', 'get_time', 'explode']);
      await agent.run('hello', { thread: agent.getNewThread() });
      for (const r of running.emulator.requests) expect(r.headers['openai-beta'], r.path).to.equal('assistants=v2');
    });

    it('the emulator refuses calls without the beta header', async () => {
      const response = await fetch(`${running.emulator.openaiBaseURL}/assistants`, { headers: { authorization: 'Bearer test' } });
      expect(response.status).to.equal(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).to.contain('OpenAI-Beta');
    });

    it('lists definitions across pages and retrieves one with its execution options', async () => {
      for (let i = 0; i < 3; i++) await create({ name: `a${i}` });
      const target = await create({ name: 'opts', executionOptions: { maxCompletionTokens: 77, parallelToolCalls: false, toolCallBehavior: { toolChoice: 'auto' } }, metadata: { team: 'x' } });
      const all = await OpenAIAssistantAgent.listDefinitions(client);
      expect(all.map((d) => d.name)).to.include.members(['a0', 'a1', 'a2', 'opts']);
      const again = await OpenAIAssistantAgent.retrieve(OpenAIServiceConfiguration.forOpenAI({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 }), target.id!);
      expect(again.definition.executionOptions).to.deep.equal({ maxCompletionTokens: 77, parallelToolCalls: false, toolCallBehavior: { toolChoice: 'auto' } });
      expect(again.definition.metadata).to.deep.equal({ team: 'x' });
      await again.run('hi', { thread: again.getNewThread() });
      expect(runBodies().at(-1)).to.include({ max_completion_tokens: 77, parallel_tool_calls: false, tool_choice: 'auto' });
    });

    it('after delete every call is an AssistantDeletedError', async () => {
      const agent = await create();
      const thread = agent.getNewThread();
      await agent.delete();
      expect(agent.isDeleted).to.equal(true);
      await client.beta.assistants.retrieve(agent.id!).then(
        () => expect.fail('assistant still exists'),
        (e: unknown) => expect((e as { status: number }).status).to.equal(404),
      );
      expect(await failure(agent.run('hi', { thread }))).to.be.instanceOf(AssistantDeletedError);
      expect(await failure(agent.createThread())).to.be.instanceOf(AssistantDeletedError);
      expect(await failure(agent.delete())).to.be.instanceOf(AssistantDeletedError);
      expect(() => agent.getNewThread()).to.throw(AssistantDeletedError);
      expect(await failure(lastValueFrom(agent.runStream('hi')))).to.be.instanceOf(AssistantDeletedError);
    });
  });

  describe('threads and messages', () => {
    it('keeps multi-turn memory on the service and resumes a serialized thread', async () => {
      const agent = await create();
      const thread = agent.getNewThread();
      await agent.run('My name is Ada.', { thread });
      expect(thread.serviceThreadId).to.match(/^thread_/);
      const saved = JSON.parse(JSON.stringify(await thread.serialize()));
      expect(saved).to.deep.include({ $type: 'service', provider: 'openai-assistants', agent: 'helper', serviceThreadId: thread.serviceThreadId });
      const other = await OpenAIAssistantAgent.retrieve(client, agent.id!, { polling: { intervalMs: 1 } });
      const resumed = await other.deserializeThread(saved);
      const answer = await other.run("What's my name?", { thread: resumed });
      expect(answer.text).to.equal('Your name is Ada.');
    });

    it('createThread / addChatMessage / getThreadMessages (all pages, in order) / invoke / deleteThread', async () => {
      const agent = await create();
      const thread = await agent.createThread({ messages: [{ role: 'user', contents: [{ kind: 'text', text: 'My name is Bo.' }] }], metadata: { k: 'v' } });
      for (let i = 0; i < 120; i++) await agent.addChatMessage(thread, `note ${i}`);
      await agent.addChatMessage(thread, "What's my name?");
      const response = await agent.invoke(thread);
      expect(response.text).to.equal('Your name is Bo.');
      const messages = await agent.getThreadMessages(thread);
      expect(messages).to.have.length(123);
      expect(messages[0]!.contents).to.deep.equal([{ kind: 'text', text: 'My name is Bo.' }]);
      expect(messages[1]!.contents).to.deep.equal([{ kind: 'text', text: 'note 0' }]);
      expect(messages.at(-1)).to.deep.include({ role: 'assistant', authorName: 'helper' });
      expect(running.emulator.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/messages')).length).to.be.greaterThan(1);
      await agent.deleteThread(thread);
      expect(await failure(client.beta.threads.retrieve(thread.serviceThreadId!))).to.be.instanceOf(Error);
      expect(await failure(agent.addChatMessage(thread, 'x'))).to.be.instanceOf(NotFoundError);
      expect(agent.id).to.be.a('string');
      expect((await client.beta.assistants.retrieve(agent.id!)).id).to.equal(agent.id);
    });

    it('rejects a thread of another provider or agent, and bad serialized state, with typed errors', async () => {
      const agent = await create();
      const chatThread = new AgentThread({ origin: { provider: 'openai-chat' } });
      expect(await failure(agent.run('hi', { thread: chatThread }))).to.be.instanceOf(ThreadCompatibilityError);
      expect(await failure(agent.deserializeThread({ $type: 'service', version: 1, provider: 'openai-responses', serviceThreadId: 'resp_1' }))).to.be.instanceOf(ThreadCompatibilityError);
      expect(await failure(agent.deserializeThread({ $type: 'service', version: 1, provider: 'openai-assistants', agent: 'someone-else', serviceThreadId: 'thread_9' }))).to.be.instanceOf(ThreadCompatibilityError);
      const bad = { $type: 'service', version: 1, provider: 'openai-assistants', serviceThreadId: 'thread_9', state: { openaiAssistants: { executionOptions: { maxCompletionTokens: 'lots' } } } };
      const error = await agent.deserializeThread(bad).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(SerializationError);
      expect((error as SerializationError).path).to.equal('$.state.openaiAssistants.executionOptions.maxCompletionTokens');
    });

    it('a run without a thread uses a throwaway remote thread and deletes it', async () => {
      const agent = await create();
      const response = await agent.run('hello');
      expect(response.text).to.contain('You said: "hello"');
      const deleted = running.emulator.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith('/v1/threads/'));
      expect(deleted).to.have.length(1);
    });
  });

  describe('options precedence', () => {
    it('invocation > thread > assistant', async () => {
      const agent = await create({ executionOptions: { maxCompletionTokens: 100, maxPromptTokens: 1000, temperature: 0.1, truncationMessageCount: 5 } });
      const thread = await agent.createThread({ executionOptions: { maxCompletionTokens: 200, temperature: 0.2 } });
      await agent.run('one', { thread });
      expect(runBodies().at(-1)).to.include({ max_completion_tokens: 200, max_prompt_tokens: 1000, temperature: 0.2 });
      expect(runBodies().at(-1)!.truncation_strategy).to.deep.equal({ type: 'last_messages', last_messages: 5 });
      await agent.run('two', { thread, invocationOptions: { maxCompletionTokens: 300, additionalInstructions: 'Shout.' } });
      expect(runBodies().at(-1)).to.include({ max_completion_tokens: 300, max_prompt_tokens: 1000, temperature: 0.2, additional_instructions: 'Shout.' });
      // The thread's options travel with it.
      const resumed = await agent.deserializeThread(JSON.parse(JSON.stringify(await thread.serialize())));
      await agent.run('three', { thread: resumed });
      expect(runBodies().at(-1)).to.include({ max_completion_tokens: 200, temperature: 0.2 });
    });
  });

  describe('run processing', () => {
    it('polls until done, honouring the poll-after hint', async () => {
      const agent = await create();
      const thread = agent.getNewThread();
      const response = await agent.run('slowly [emulator:polls=3]', { thread });
      expect(response.text).to.contain('You said');
      const polls = running.emulator.requests.filter((r) => r.method === 'GET' && /\/runs\/run_\d+$/.test(r.path));
      expect(polls.length).to.equal(5); // queued -> in_progress (x3) -> completed
      expect(response.usage).to.deep.equal({ inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    });

    it('runs multiple tool calls, submits all outputs in one call, and emits steps in order', async () => {
      const agent = await create();
      const thread = agent.getNewThread();
      const response = await agent.run('call get_weather {"city":"Oslo"} and call get_time {"zone":"CET"}', { thread });
      expect(response.messages.map((m) => m.role)).to.deep.equal(['assistant', 'tool', 'assistant']);
      expect(response.messages[0]!.contents.map((c) => (c.kind === 'function-call' ? c.name : c.kind))).to.deep.equal(['get_weather', 'get_time']);
      expect(response.messages[1]!.contents).to.deep.equal([
        { kind: 'function-result', callId: 'call_1', result: 'sunny in Oslo' },
        { kind: 'function-result', callId: 'call_2', result: '12:00 in CET' },
      ]);
      expect(response.text).to.equal('get_weather returned: sunny in Oslo\nget_time returned: 12:00 in CET');
      const submits = running.emulator.requests.filter((r) => r.path.endsWith('/submit_tool_outputs'));
      expect(submits).to.have.length(1);
      expect((submits[0]!.body as { tool_outputs: unknown[] }).tool_outputs).to.have.length(2);
    });

    it('a failing tool is reported to the assistant, not thrown', async () => {
      const agent = await create();
      const response = await agent.run('call explode {}', { thread: agent.getNewThread() });
      expect(response.messages[1]!.contents[0]).to.deep.include({ error: 'explode failed: kaboom' });
      expect(response.text).to.contain('explode returned: Error: explode failed: kaboom');
    });

    for (const status of ['failed', 'expired', 'incomplete', 'cancelled'] as const) {
      it(`a run ending "${status}" is an AssistantRunError naming the run`, async () => {
        const agent = await create();
        const thread = agent.getNewThread();
        const error = (await agent.run(`boom [emulator:${status}]`, { thread }).catch((e: unknown) => e)) as AssistantRunError;
        expect(error).to.be.instanceOf(AssistantRunError);
        expect(error.runStatus).to.equal(status);
        expect(error.runId).to.match(/^run_/);
        expect(error.threadId).to.equal(thread.serviceThreadId);
        expect(error.message).to.contain(error.runId);
        if (status === 'failed') expect(error.lastError?.message).to.contain('failed');
        // The thread is usable afterwards.
        expect((await agent.run('hello again', { thread })).text).to.contain('hello again');
      });
    }

    it('a run that does not finish in time is cancelled and reported as a timeout', async () => {
      const agent = await OpenAIAssistantAgent.create(client, { model: 'm' }, { polling: { intervalMs: 1, timeoutMs: 50 } });
      const thread = agent.getNewThread();
      const error = (await agent.run('wait [emulator:stuck]', { thread }).catch((e: unknown) => e)) as AssistantRunTimeoutError;
      expect(error).to.be.instanceOf(AssistantRunTimeoutError);
      const run = await client.beta.threads.runs.retrieve(error.runId, { thread_id: thread.serviceThreadId! });
      expect(['cancelling', 'cancelled']).to.include(run.status);
    });

    it('aborting a run cancels the remote run', async () => {
      const agent = await create();
      const thread = agent.getNewThread();
      const controller = new AbortController();
      const abortingTool = tool({
        name: 'stop_now',
        parameters: z.object({}),
        execute: () => controller.abort(),
      });
      const error = await agent.run('call stop_now {}', { thread, signal: controller.signal, tools: [abortingTool] }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(AbortError);
      const [run] = (await client.beta.threads.runs.list(thread.serviceThreadId!)).data;
      expect(run!.status).to.equal('cancelled');
      // The next turn on the thread works.
      expect((await agent.run('hello', { thread })).text).to.contain('hello');
    });

    it('an active run left on the thread is handled before a new one', async () => {
      const agent = await create();
      const thread = await agent.createThread();
      // Another process left a run waiting for tool outputs.
      const orphan = await client.beta.threads.runs.create(thread.serviceThreadId!, {
        assistant_id: agent.id!,
        additional_messages: [{ role: 'user', content: 'call get_weather {"city":"Rome"}' }],
      });
      let again = orphan;
      while (again.status === 'queued' || again.status === 'in_progress') again = await client.beta.threads.runs.retrieve(orphan.id, { thread_id: thread.serviceThreadId! });
      expect(again.status).to.equal('requires_action');
      const response = await agent.run('hello', { thread });
      expect(response.text).to.contain('hello');
      expect((await client.beta.threads.runs.retrieve(orphan.id, { thread_id: thread.serviceThreadId! })).status).to.equal('cancelled');
    });
  });

  describe('streaming', () => {
    it('streams text deltas from one request per subscription', async () => {
      const agent = await create();
      const thread = agent.getNewThread();
      const stream = agent.runStream('My name is Cy.', { thread });
      const updates = await lastValueFrom(stream.pipe(toArray()));
      expect(updates.map((u) => u.text).join('')).to.equal('Nice to meet you, Cy!');
      expect(updates.filter((u) => u.text).length).to.be.greaterThan(1);
      expect(running.emulator.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/runs'))).to.have.length(1);
      const next = await lastValueFrom(agent.runStream("What's my name?", { thread }).pipe(toArray()));
      expect(next.map((u) => u.text).join('')).to.equal('Your name is Cy.');
    });

    it('streams through requires_action -> submit tool outputs (streamed) -> continue', async () => {
      const agent = await create();
      const updates: AgentRunResponseUpdate[] = await lastValueFrom(agent.runStream('call get_weather {"city":"Lima"}', { thread: agent.getNewThread() }).pipe(toArray()));
      const calls = updates.flatMap((u) => u.contents.filter((c) => c.kind === 'function-call'));
      const results = updates.flatMap((u) => u.contents.filter((c) => c.kind === 'function-result'));
      expect(calls).to.have.length(1);
      expect(results).to.deep.equal([{ kind: 'function-result', callId: 'call_1', result: 'sunny in Lima' }]);
      expect(updates.map((u) => u.text).join('')).to.equal('get_weather returned: sunny in Lima');
      const submit = running.emulator.requests.find((r) => r.path.endsWith('/submit_tool_outputs'));
      expect((submit!.body as { stream: boolean }).stream).to.equal(true);
    });

    it('a failing streamed run errors with AssistantRunError', async () => {
      const agent = await create();
      const error = await lastValueFrom(agent.runStream('x [emulator:failed]', { thread: agent.getNewThread() })).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(AssistantRunError);
    });

    it('unsubscribing aborts the request and cancels the remote run', async () => {
      const agent = await create();
      const thread = agent.getNewThread();
      const subscription = agent.runStream('wait [emulator:stuck]', { thread }).subscribe({ error: () => undefined });
      // Wait (without a timed assertion) until the run exists on the service.
      while (!running.emulator.requests.some((r) => r.method === 'POST' && r.path.endsWith('/runs'))) await new Promise((r) => setTimeout(r, 2));
      while (!thread.serviceThreadId || (await client.beta.threads.runs.list(thread.serviceThreadId)).data.length === 0) await new Promise((r) => setTimeout(r, 2));
      subscription.unsubscribe();
      await running.emulator.waitForAbortedStream();
      while (!running.emulator.requests.some((r) => r.path.endsWith('/cancel'))) await new Promise((r) => setTimeout(r, 2));
      const [run] = (await client.beta.threads.runs.list(thread.serviceThreadId)).data;
      expect(['cancelling', 'cancelled']).to.include(run!.status);
      const next = await firstValueFrom(agent.runStream('hello', { thread }).pipe(toArray()));
      expect(next.map((u) => u.text).join('')).to.contain('hello');
    });
  });

  describe('container', () => {
    it('createContainer with client "openai-assistants" yields an OpenAIAssistantAgent', async () => {
      const container = createContainer({
        plugins: [openaiPlugin({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 })],
        tools: [weather],
        agents: { a: { client: 'openai-assistants', model: 'gpt-test', instructions: 'Help.', tools: ['get_weather'], polling: { intervalMs: 1 } } },
      });
      const agent = container.get(agentToken('a'));
      expect(agent).to.be.instanceOf(OpenAIAssistantAgent);
      const response = await agent.run('call get_weather {"city":"Bern"}', { thread: agent.getNewThread() });
      expect(response.text).to.equal('get_weather returned: sunny in Bern');
      const created = running.emulator.requests.find((r) => r.method === 'POST' && r.path === '/v1/assistants');
      expect(created!.body).to.deep.include({ model: 'gpt-test', name: 'a', instructions: 'Help.' });
    });
  });
});
