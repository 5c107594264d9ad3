import { expect } from 'chai';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import {
  AbortError,
  AgentThread,
  ChatAgent,
  ConnectionError,
  RateLimitError,
  SerializationError,
  ServiceError,
  ThreadCompatibilityError,
  agentToken,
  createContainer,
  tool,
  type AIAgent,
  type ChatMessage,
  type FunctionResultContent,
} from 'skein';
import { OpenAIChatClient, openaiPlugin } from 'skein/openai';
import { until } from '../support/async-expectations.js';
import { Emulator } from 'skein/testing';
import { useEmulator } from '../support/emulator.js';

interface ChatRequestBody {
  messages: { role: string; content: unknown; tool_calls?: unknown[] }[];
  tools?: unknown[];
  tool_choice?: string;
}

describe('OpenAI Chat Completions end to end (real openai SDK against the emulator)', () => {
  const emu = useEmulator({ apiKey: 'sk-test-secret' });
  afterEach(() => emu.emulator.clearFaults());

  function newContainer() {
    return createContainer({
      plugins: [openaiPlugin({ apiKey: 'sk-test-secret', baseURL: emu.emulator.openaiBaseURL, maxRetries: 0 })],
      agents: { assistant: { client: 'openai-chat', model: 'gpt-4.1', instructions: 'You are a helpful assistant' } },
    });
  }

  function chatBodies(): ChatRequestBody[] {
    return emu.emulator.requestsTo('/v1/chat/completions').map((r) => r.body as ChatRequestBody);
  }

  async function snapshot(thread: AgentThread): Promise<string> {
    return JSON.stringify(await thread.serialize());
  }

  describe('conversation', () => {
    let agent: AIAgent;
    beforeEach(() => {
      agent = newContainer().get(agentToken('assistant'));
    });

    it('remembers across turns on one thread, sending the whole history with the instructions', async () => {
      const thread = agent.getNewThread();
      await agent.run('My name is Alice', { thread });
      const r = await agent.run("What's my name?", { thread });
      expect(r.text).to.contain('Alice');
      const last = chatBodies().at(-1)!;
      expect(last.messages.map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'user']);
      expect(last.messages[0]!.content).to.equal('You are a helpful assistant');
      const stored = await thread.messageStore!.listMessages();
      expect(stored.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
      expect(stored[3]!.authorName).to.equal('assistant');
    });

    it('stamps every stored message, the replies included, with when it was made (streaming and not)', async () => {
      const thread = agent.getNewThread();
      const before = Date.now();
      await agent.run('My name is Alice', { thread });
      await lastValueFrom(agent.runStream("What's my name?", { thread }));
      const stored = await thread.messageStore!.listMessages();
      expect(stored.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant']);
      const times = stored.map((m) => Date.parse(m.createdAt ?? ''));
      for (const t of times) expect(t).to.be.within(before - 1, Date.now());
      expect([...times].sort((a, b) => a - b)).to.deep.equal(times);
    });

    it('uses a throwaway thread when none is given', async () => {
      const thread = agent.getNewThread();
      await agent.run('My name is Alice', { thread });
      const r = await agent.run("What's my name?");
      expect(r.text).to.equal("I don't know your name yet.");
      expect(await thread.messageStore!.listMessages()).to.have.length(2);
    });

    it('serializes to a JSON string and resumes in a new container', async () => {
      const thread = agent.getNewThread();
      await agent.run('My name is Alice', { thread });
      await agent.run('I like tea', { thread });
      const saved = JSON.stringify(await thread.serialize());

      const other = newContainer().get(agentToken('assistant'));
      const resumed = await other.deserializeThread(JSON.parse(saved));
      expect((await other.run("What's my name?", { thread: resumed })).text).to.equal('Your name is Alice.');
      const topics = await other.run('What did we talk about?', { thread: resumed });
      expect(topics.text).to.contain('"My name is Alice"').and.to.contain('"I like tea"');
    });

    it('rejects a thread of another provider and a thread holding a service id', async () => {
      const foreign = new AgentThread({ origin: { provider: 'openai-responses', agent: 'assistant' }, serviceThreadId: 'resp_1' });
      await agent.run('hi', { thread: foreign }).then(
        () => expect.fail('expected ThreadCompatibilityError'),
        (e: Error) => {
          expect(e).to.be.instanceOf(ThreadCompatibilityError);
          expect(e.message).to.contain('"openai-chat"').and.to.contain('openai-responses');
        },
      );
      const sneaky = { $type: 'service', version: 1, provider: 'openai-chat', agent: 'assistant', serviceThreadId: 'resp_1' };
      await agent.deserializeThread(sneaky).then(
        () => expect.fail('expected ThreadCompatibilityError'),
        (e: Error) => expect(e).to.be.instanceOf(ThreadCompatibilityError).and.have.property('message').that.contains('resp_1'),
      );
    });

    it("rejects another agent's thread", async () => {
      const other = new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'sk-test-secret', baseURL: emu.emulator.openaiBaseURL, model: 'm' }), name: 'support' });
      const thread = other.getNewThread();
      await agent.run('hi', { thread }).then(
        () => expect.fail('expected ThreadCompatibilityError'),
        (e: Error) => expect(e).to.be.instanceOf(ThreadCompatibilityError).and.have.property('message').that.contains('"support"'),
      );
    });

    it('gives SerializationError for every bad serialized input, leaving nothing half-read', async () => {
      const good = await (async () => {
        const t = agent.getNewThread();
        await agent.run('My name is Alice', { thread: t });
        return JSON.parse(JSON.stringify(await t.serialize())) as Record<string, unknown>;
      })();
      const bad: unknown[] = [
        null,
        'x',
        { ...good, $type: 'nope' },
        { ...good, version: 9 },
        { ...good, store: { messages: [{ role: 'user' }] } },
        JSON.parse('{"$type":"in-memory","version":1,"provider":"openai-chat","store":{"messages":[]},"__proto__":{"x":1}}'),
      ];
      for (const input of bad) {
        await agent.deserializeThread(input).then(
          () => expect.fail(`accepted ${JSON.stringify(input)}`),
          (e: Error) => expect(e).to.be.instanceOf(SerializationError),
        );
      }
    });
  });

  describe('streaming', () => {
    it('streams text deltas, updates the thread on completion, and reports usage', async () => {
      const agent = newContainer().get(agentToken('assistant'));
      const thread = agent.getNewThread();
      await agent.run('My name is Alice', { thread });
      const updates = await lastValueFrom(agent.runStream('What did we talk about?', { thread }).pipe(toArray()));
      const textDeltas = updates.filter((u) => u.text !== '');
      expect(textDeltas.length).to.be.greaterThan(1);
      expect(textDeltas.map((u) => u.text).join('')).to.equal('We talked about: "My name is Alice"');
      expect(updates.some((u) => u.contents.some((c) => c.kind === 'usage'))).to.equal(true);
      const stored = await thread.messageStore!.listMessages();
      expect(stored).to.have.length(4);
      expect(stored[3]!.contents).to.deep.equal([{ kind: 'text', text: 'We talked about: "My name is Alice"' }]);
      expect(emu.emulator.requestsTo('/v1/chat/completions').at(-1)!.body).to.have.property('stream', true);
    });

    it('is cold: nothing is sent until subscription, and each subscription sends one request', async () => {
      const agent = newContainer().get(agentToken('assistant'));
      const before = emu.emulator.requestsTo('/v1/chat/completions').length;
      const stream = agent.runStream('Hello');
      expect(emu.emulator.requestsTo('/v1/chat/completions').length).to.equal(before);
      await lastValueFrom(stream);
      await lastValueFrom(stream);
      expect(emu.emulator.requestsTo('/v1/chat/completions').length).to.equal(before + 2);
    });

    it('aborts the HTTP request when unsubscribed, leaving the thread unchanged', async () => {
      const agent = newContainer().get(agentToken('assistant'));
      const thread = agent.getNewThread();
      await agent.run('My name is Alice', { thread });
      const before = await snapshot(thread);
      emu.emulator.injectFault({ kind: 'stall-stream', afterEvents: 2, path: '/v1/chat/completions' });
      const aborted = emu.emulator.abortedStreams;
      const closed = emu.emulator.waitForAbortedStream();
      const first = await firstValueFrom(agent.runStream('What did we talk about?', { thread }));
      expect(first.role).to.equal('assistant');
      await closed;
      expect(emu.emulator.abortedStreams).to.equal(aborted + 1);
      // The thread lock is released once the aborted turn unwinds; the thread is as it was.
      const next = await agent.run("What's my name?", { thread });
      expect(next.text).to.equal('Your name is Alice.');
      const messages = await thread.messageStore!.listMessages();
      expect(messages).to.have.length(4);
      expect(JSON.parse(before).store.messages).to.deep.equal(JSON.parse(JSON.stringify(messages.slice(0, 2))));
    });

    it('still aborts the HTTP request when unsubscribed after streamed turns that ended on their own (their signals are reused)', async () => {
      const agent = newContainer().get(agentToken('assistant'));
      const thread = agent.getNewThread();
      for (const text of ['My name is Alice', 'I live in Paris', 'I like tea']) await lastValueFrom(agent.runStream(text, { thread }));
      emu.emulator.injectFault({ kind: 'stall-stream', afterEvents: 2, path: '/v1/chat/completions' });
      const aborted = emu.emulator.abortedStreams;
      const closed = emu.emulator.waitForAbortedStream();
      await firstValueFrom(agent.runStream('What did we talk about?', { thread }));
      await closed;
      expect(emu.emulator.abortedStreams).to.equal(aborted + 1);
      expect(await thread.messageStore!.listMessages()).to.have.length(6);
      expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Alice.');
    });

    it("aborts through the caller's AbortSignal with an AbortError", async () => {
      const agent = newContainer().get(agentToken('assistant'));
      const thread = agent.getNewThread();
      const controller = new AbortController();
      emu.emulator.injectFault({ kind: 'stall-stream', afterEvents: 1, path: '/v1/chat/completions' });
      const closed = emu.emulator.waitForAbortedStream();
      const before = emu.emulator.requestsTo('/v1/chat/completions').length;
      const result = lastValueFrom(agent.runStream('Hello', { thread, signal: controller.signal }));
      // Abort once the request is on the server (the stream then stalls), whatever Node's timing.
      await until(() => emu.emulator.requestsTo('/v1/chat/completions').length > before);
      controller.abort();
      await result.then(
        () => expect.fail('expected AbortError'),
        (e: Error) => expect(e).to.be.instanceOf(AbortError),
      );
      await closed;
      expect(await thread.messageStore!.listMessages()).to.deep.equal([]);
    });

    it('aborts a non-streaming run through its AbortSignal', async () => {
      const agent = newContainer().get(agentToken('assistant'));
      const thread = agent.getNewThread();
      const controller = new AbortController();
      emu.emulator.injectFault({ kind: 'latency', ms: 10_000, path: '/v1/chat/completions' });
      const run = agent.run('Hello', { thread, signal: controller.signal });
      setTimeout(() => controller.abort(), 20);
      await run.then(
        () => expect.fail('expected AbortError'),
        (e: Error) => expect(e).to.be.instanceOf(AbortError),
      );
      expect(await thread.messageStore!.listMessages()).to.deep.equal([]);
    });
  });

  describe('tools', () => {
    const calls: string[] = [];
    const getWeather = tool({
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => {
        calls.push(`weather:${city}`);
        return { city, temperatureC: city.length };
      },
    });
    const getTime = tool({
      name: 'get_time',
      description: 'Local time in a city',
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => {
        calls.push(`time:${city}`);
        return `12:00 in ${city}`;
      },
    });
    const explode = tool({
      name: 'explode',
      description: 'Always fails',
      parameters: z.object({}),
      execute: () => {
        throw new Error('the fuse was wet');
      },
    });

    function toolAgent(maxToolIterations?: number) {
      return new ChatAgent({
        chatClient: new OpenAIChatClient({ apiKey: 'sk-test-secret', baseURL: emu.emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 }),
        name: 'Helper',
        instructions: 'Use tools.',
        tools: [getWeather, getTime, explode],
        maxToolIterations,
      });
    }

    function results(messages: ChatMessage[]): FunctionResultContent[] {
      return messages.flatMap((m) => m.contents).filter((c): c is FunctionResultContent => c.kind === 'function-result');
    }

    async function expectEveryCallAnswered(thread: AgentThread) {
      const messages = await thread.messageStore!.listMessages();
      const callIds = messages.flatMap((m) => m.contents).filter((c) => c.kind === 'function-call').map((c) => (c as { callId: string }).callId);
      expect(results(messages).map((r) => r.callId).sort()).to.deep.equal([...callIds].sort());
      return messages;
    }

    beforeEach(() => (calls.length = 0));

    it('runs a single tool call and feeds the result back', async () => {
      const agent = toolAgent();
      const thread = agent.getNewThread();
      const r = await agent.run('What is the weather in Paris?', { thread });
      expect(calls).to.deep.equal(['weather:Paris']);
      expect(r.text).to.contain('get_weather returned').and.to.contain('"temperatureC":5');
      const messages = await expectEveryCallAnswered(thread);
      expect(messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
      const second = chatBodies().at(-1)!;
      expect(second.messages.at(-1)).to.deep.include({ role: 'tool', content: JSON.stringify({ city: 'Paris', temperatureC: 5 }) });
      expect(second.tools).to.have.length(3);
    });

    it('runs parallel calls the model asks for in one round', async () => {
      const agent = toolAgent();
      const thread = agent.getNewThread();
      await agent.run('call get_weather {"city":"Oslo"} and call get_time {"city":"Lima"}', { thread });
      expect(calls.sort()).to.deep.equal(['time:Lima', 'weather:Oslo']);
      const messages = await expectEveryCallAnswered(thread);
      expect(messages[2]!.contents).to.have.length(2);
      expect(messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'tool', 'assistant']);
    });

    it('turns a throwing tool into an error result the model sees', async () => {
      const agent = toolAgent();
      const thread = agent.getNewThread();
      const r = await agent.run('call explode {}', { thread });
      expect(results(r.messages)[0]!.error).to.contain('the fuse was wet');
      expect(chatBodies().at(-1)!.messages.at(-1)!.content).to.equal('Error: explode failed: the fuse was wet');
      await expectEveryCallAnswered(thread);
    });

    it('turns invalid JSON and schema-violating arguments into error results without running the tool', async () => {
      const agent = toolAgent();
      const thread = agent.getNewThread();
      const r1 = await agent.run('call get_weather {"city": Paris', { thread });
      expect(results(r1.messages)[0]!.error).to.match(/^Invalid JSON arguments for get_weather/);
      const r2 = await agent.run('call get_weather {"city": 42}', { thread });
      expect(results(r2.messages)[0]!.error).to.match(/^Invalid arguments for get_weather: city/);
      expect(calls).to.deep.equal([]);
      const messages = await expectEveryCallAnswered(thread);
      const raw = messages.flatMap((m) => m.contents).find((c) => c.kind === 'function-call');
      expect(raw).to.have.property('arguments', '{"city": Paris');
    });

    it('stops at the max-iterations limit, answering every call and asking once more without tools', async () => {
      const agent = toolAgent(2);
      const thread = agent.getNewThread();
      const before = chatBodies().length;
      const r = await agent.run('keep calling get_time: call get_time {"city":"Rome"}', { thread });
      expect(calls).to.deep.equal(['time:Rome', 'time:Rome']);
      const bodies = chatBodies().slice(before);
      expect(bodies).to.have.length(4);
      expect(bodies.at(-1)!.tool_choice).to.equal('none');
      expect(results(r.messages).at(-1)!.error).to.contain('limit of 2 tool rounds');
      const messages = await expectEveryCallAnswered(thread);
      expect(messages.at(-1)!.role).to.equal('assistant');
    });

    it('streams tool-call progress and tool results, then the answer', async () => {
      const agent = toolAgent();
      const thread = agent.getNewThread();
      const updates = await lastValueFrom(agent.runStream('What is the weather in Paris?', { thread }).pipe(toArray()));
      expect(updates.some((u) => u.toolCallDelta !== undefined)).to.equal(true);
      expect(updates.some((u) => u.role === 'tool' && u.contents.some((c) => c.kind === 'function-result'))).to.equal(true);
      expect(updates.map((u) => u.text).join('')).to.contain('get_weather returned');
      await expectEveryCallAnswered(thread);
    });
  });

  describe('faults', () => {
    async function expectUnchangedAfterFault(fault: Parameters<Emulator['injectFault']>[0], errorType: typeof ServiceError, stream: boolean) {
      const agent = newContainer().get(agentToken('assistant'));
      const thread = agent.getNewThread();
      await agent.run('My name is Alice', { thread });
      const before = await snapshot(thread);
      emu.emulator.injectFault(fault);
      const attempt = stream ? lastValueFrom(agent.runStream('What did we talk about?', { thread })) : agent.run('What did we talk about?', { thread });
      const error = await attempt.then(
        () => expect.fail('expected an error'),
        (e: Error) => e,
      );
      expect(error).to.be.instanceOf(errorType);
      expect(await snapshot(thread)).to.equal(before);
      return error as ServiceError;
    }

    it('a 429 becomes RateLimitError with its status, thread unchanged', async () => {
      const e = await expectUnchangedAfterFault({ kind: 'status', status: 429, path: '/v1/chat/completions' }, RateLimitError, false);
      expect(e.status).to.equal(429);
      expect(e.provider).to.equal('openai-chat');
    });

    it('a 500 becomes ServiceError with its status, thread unchanged (streaming too)', async () => {
      const e = await expectUnchangedAfterFault({ kind: 'status', status: 500, path: '/v1/chat/completions' }, ServiceError, true);
      expect(e.status).to.equal(500);
    });

    it('a stream cut mid-way becomes ConnectionError, thread unchanged', async () => {
      await expectUnchangedAfterFault({ kind: 'cut-stream', afterEvents: 2, path: '/v1/chat/completions' }, ConnectionError, true);
    });

    it('a garbage JSON reply becomes ConnectionError, thread unchanged', async () => {
      await expectUnchangedAfterFault({ kind: 'garbage-json', path: '/v1/chat/completions' }, ConnectionError, false);
    });

    it('retries a 429 when maxRetries allows, and the turn lands once', async () => {
      const container = createContainer({
        plugins: [openaiPlugin({ apiKey: 'sk-test-secret', baseURL: emu.emulator.openaiBaseURL, maxRetries: 2 })],
        agents: { assistant: { client: 'openai-chat', model: 'gpt-4.1' } },
      });
      const agent = container.get(agentToken('assistant'));
      const thread = agent.getNewThread();
      emu.emulator.injectFault({ kind: 'status', status: 429, retryAfterSeconds: 0, path: '/v1/chat/completions' });
      const r = await agent.run('My name is Alice', { thread });
      expect(r.text).to.equal('Nice to meet you, Alice!');
      expect(await thread.messageStore!.listMessages()).to.have.length(2);
    });

    it('never puts the API key in an error message', async () => {
      const container = createContainer({
        plugins: [openaiPlugin({ apiKey: 'sk-wrong-secret-value', baseURL: emu.emulator.openaiBaseURL, maxRetries: 0 })],
        agents: { assistant: { client: 'openai-chat', model: 'gpt-4.1' } },
      });
      const error = await container
        .get(agentToken('assistant'))
        .run('hi')
        .then(() => expect.fail('expected an error'), (e: Error) => e);
      expect(error.name).to.equal('AuthenticationError');
      expect(`${error.message} ${error.stack}`).to.not.contain('sk-wrong-secret-value');
    });
  });
});
