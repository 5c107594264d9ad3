import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import { AbortError, ChatAgent, NotFoundError } from 'skein';
import { INTERRUPTED_CALL_OUTPUT } from 'skein/openai';
import { emulatorPerTest } from '../support/emulator.js';
import { agentFor, rawClient, responseBodies, serializedMidToolExchange, viaJson, weather } from './fixture.js';

describe('Responses: service threads (store: true)', () => {
  const running = emulatorPerTest();

  describe('previous_response_id chaining (the default)', () => {
    it('remembers across turns, sending only the new input and the last response id', async () => {
      const agent = agentFor(running.emulator, { instructions: 'Be brief.' });
      expect(agent.threadKind).to.equal('service');
      const thread = agent.getNewThread();
      const first = await agent.run('My name is Ada.', { thread });
      expect(first.text).to.equal('Nice to meet you, Ada!');
      expect(thread.serviceThreadId).to.equal(first.responseId).and.match(/^resp_/);
      expect(thread.messageStore).to.equal(undefined);

      const second = await agent.run("What's my name?", { thread });
      expect(second.text).to.equal('Your name is Ada.');

      const [, body] = responseBodies(running.emulator);
      expect(body!.previous_response_id).to.equal(first.responseId);
      expect(body!.input).to.deep.equal([{ type: 'message', role: 'user', content: "What's my name?" }]);
      expect(body!.instructions).to.equal('Be brief.');
      expect(thread.serviceThreadId).to.equal(second.responseId);
    });

    it('serializes to the id only and resumes in a new container', async () => {
      const thread = agentFor(running.emulator).getNewThread();
      await agentFor(running.emulator).run('My name is Grace.', { thread });
      const json = viaJson(await thread.serialize());
      expect(json).to.deep.equal({ $type: 'service', version: 1, provider: 'openai-responses', agent: 'assistant', serviceThreadId: thread.serviceThreadId });

      const other = agentFor(running.emulator); // a new process: new container, new SDK client
      const resumed = await other.deserializeThread(json);
      const answer = await other.run("What's my name?", { thread: resumed });
      expect(answer.text).to.equal('Your name is Grace.');
    });

    it('deleteThread deletes every stored response of the chain; the thread then fails with NotFoundError', async () => {
      const agent = agentFor(running.emulator);
      const thread = agent.getNewThread();
      const first = await agent.run('My name is Ada.', { thread });
      const second = await agent.run('I like tea.', { thread });
      await agent.deleteThread(thread);

      const openai = rawClient(running.emulator);
      for (const id of [first.responseId!, second.responseId!]) {
        const error = await openai.responses.retrieve(id).catch((e: unknown) => e);
        expect(error).to.have.property('status', 404);
      }
      const failure = await agent.run("What's my name?", { thread }).catch((e: unknown) => e);
      expect(failure).to.be.instanceOf(NotFoundError);
      expect((failure as NotFoundError).message).to.contain('not found');
      await agent.deleteThread(thread); // already gone: still fine
    });

    it('runs a tool round trip; the follow-up request carries only the function output', async () => {
      const agent = agentFor(running.emulator, { tools: ['get_weather'] });
      const thread = agent.getNewThread();
      const answer = await agent.run('call get_weather {"city":"Paris"}', { thread });
      expect(answer.text).to.equal('get_weather returned: sunny in Paris');
      const call = answer.messages[0]!.contents[0]!;
      expect(call).to.include({ kind: 'function-call', name: 'get_weather' });
      expect(call.additionalProperties).to.deep.equal({ itemId: 'fc_1' });

      const [firstBody, secondBody] = responseBodies(running.emulator);
      expect(secondBody!.previous_response_id).to.equal(answer.messages[0]!.messageId);
      expect(secondBody!.input).to.deep.equal([{ type: 'function_call_output', call_id: 'call_1', output: 'sunny in Paris' }]);
      expect(firstBody!.tools).to.deep.equal([
        { type: 'function', name: 'get_weather', description: 'Weather for a city', parameters: weather.declaration.parameters, strict: false },
      ]);
      expect((await agent.run('What did we talk about?', { thread })).text).to.contain('call get_weather');
    });

    it('resumes a thread serialized in the middle of a tool exchange', async () => {
      const agent = agentFor(running.emulator);
      const thread = agent.getNewThread();
      await agent.run('My name is Ada.', { thread });
      const { saved, error } = await serializedMidToolExchange(agent, thread);
      expect(error).to.be.instanceOf(AbortError);

      const other = agentFor(running.emulator);
      const resumed = await other.deserializeThread(saved);
      expect((await other.run("What's my name?", { thread: resumed })).text).to.equal('Your name is Ada.');
    });

    it('answers calls a stored response left pending instead of failing with "No tool output found"', async () => {
      const openai = rawClient(running.emulator);
      const pending = await openai.responses.create({
        model: 'gpt-test',
        input: 'call get_weather {"city":"Rome"}',
        tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false }],
      });
      // The service itself refuses to continue it without the output:
      const refused = await openai.responses.create({ model: 'gpt-test', input: 'hello', previous_response_id: pending.id }).catch((e: unknown) => e);
      expect(refused).to.have.property('status', 400);
      expect((refused as Error).message).to.contain('No tool output found for function call call_1.');

      const agent = agentFor(running.emulator);
      const thread = await agent.deserializeThread({ $type: 'service', version: 1, provider: 'openai-responses', agent: 'assistant', serviceThreadId: pending.id });
      const answer = await agent.run('Hello again', { thread });
      expect(answer.text).to.contain('You said: "Hello again"');
      const last = responseBodies(running.emulator).at(-1)!;
      expect(last.input).to.deep.equal([
        { type: 'function_call_output', call_id: 'call_1', output: INTERRUPTED_CALL_OUTPUT },
        { type: 'message', role: 'user', content: 'Hello again' },
      ]);
    });

    it('streams text deltas and records the thread when the stream completes', async () => {
      const agent = agentFor(running.emulator);
      const thread = agent.getNewThread();
      await agent.run('My name is Ada.', { thread });
      const updates = await lastValueFrom(agent.runStream("What's my name?", { thread }).pipe(toArray()));
      const texts = updates.map((u) => u.text).filter((t) => t !== '');
      expect(texts.length).to.be.greaterThan(1);
      expect(texts.join('')).to.equal('Your name is Ada.');
      expect(responseBodies(running.emulator)[1]!.stream).to.equal(true);
      expect(thread.serviceThreadId).to.equal(updates.find((u) => u.responseId)!.responseId);
      expect((await agent.run('What did we talk about?', { thread })).text).to.equal(`We talked about: "My name is Ada."; "What's my name?"`);
    });

    it('streams function-call argument deltas', async () => {
      const agent = agentFor(running.emulator, { tools: ['get_weather'] });
      const updates = await lastValueFrom(agent.runStream('call get_weather {"city":"Paris"}').pipe(toArray()));
      const deltas = updates.filter((u) => u.toolCallDelta).map((u) => u.toolCallDelta!);
      expect(deltas[0]).to.deep.include({ callId: 'call_1', name: 'get_weather' });
      expect(deltas.map((d) => d.argumentsDelta).join('')).to.equal('{"city":"Paris"}');
      expect(updates.map((u) => u.text).join('')).to.equal('get_weather returned: sunny in Paris');
    });

    it('aborts the HTTP stream on unsubscribe and leaves the thread unchanged', async () => {
      const agent = agentFor(running.emulator);
      const thread = agent.getNewThread();
      await agent.run('My name is Ada.', { thread });
      const before = viaJson(await thread.serialize());
      running.emulator.injectFault({ kind: 'stall-stream', afterEvents: 4, path: '/v1/responses' });
      await new Promise<void>((resolve, reject) => {
        const subscription = agent.runStream('Tell me a long story', { thread }).subscribe({
          next: (update) => {
            if (update.responseId) {
              subscription.unsubscribe();
              resolve();
            }
          },
          error: reject,
        });
      });
      await running.emulator.waitForAbortedStream();
      expect(running.emulator.abortedStreams).to.equal(1);
      expect(viaJson(await thread.serialize())).to.deep.equal(before);
    });
  });

  describe('Conversations API (conversation: true)', () => {
    it('creates the conversation on demand and continues it with only the new input', async () => {
      const agent = agentFor(running.emulator, { conversation: true });
      const thread = agent.getNewThread();
      await agent.run('My name is Lin.', { thread });
      expect(thread.serviceThreadId).to.equal('conv_1');
      expect(running.emulator.requestsTo('/v1/conversations')).to.have.length(1);

      expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Lin.');
      const [first, second] = responseBodies(running.emulator);
      expect(first!.conversation).to.equal('conv_1');
      expect(second!.conversation).to.equal('conv_1');
      expect(second!.previous_response_id).to.equal(undefined);
      expect(second!.input).to.deep.equal([{ type: 'message', role: 'user', content: "What's my name?" }]);
      expect(running.emulator.requestsTo('/v1/conversations')).to.have.length(1);

      const items = await rawClient(running.emulator).conversations.items.list('conv_1', { order: 'asc' });
      expect(items.data.map((i) => i.type)).to.deep.equal(['message', 'message', 'message', 'message']);
    });

    it('serializes the conversation id and resumes in a new container', async () => {
      const thread = agentFor(running.emulator, { conversation: true }).getNewThread();
      await agentFor(running.emulator, { conversation: true }).run('My name is Lin.', { thread });
      const json = viaJson(await thread.serialize());
      expect(json).to.have.property('serviceThreadId', 'conv_1');
      const other = agentFor(running.emulator); // the id says it is a conversation: no option needed to continue
      expect((await other.run("What's my name?", { thread: await other.deserializeThread(json) })).text).to.equal('Your name is Lin.');
    });

    it('deleteThread deletes the conversation; the thread then fails with NotFoundError', async () => {
      const agent = agentFor(running.emulator, { conversation: true });
      const thread = agent.getNewThread();
      await agent.run('My name is Lin.', { thread });
      await agent.deleteThread(thread);
      const gone = await rawClient(running.emulator).conversations.retrieve('conv_1').catch((e: unknown) => e);
      expect(gone).to.have.property('status', 404);
      const failure = await agent.run("What's my name?", { thread }).catch((e: unknown) => e);
      expect(failure).to.be.instanceOf(NotFoundError);
      expect((failure as NotFoundError).status).to.equal(404);
    });

    it('resumes mid tool exchange: calls the conversation holds without output are answered, not fatal', async () => {
      const agent = agentFor(running.emulator, { conversation: true });
      const thread = agent.getNewThread();
      await agent.run('My name is Lin.', { thread });
      const { saved } = await serializedMidToolExchange(agent, thread);

      const other = agentFor(running.emulator);
      const resumed = await other.deserializeThread(saved);
      expect((await other.run("What's my name?", { thread: resumed })).text).to.equal('Your name is Lin.');
      const items = await rawClient(running.emulator).conversations.items.list('conv_1', { order: 'asc' });
      const output = items.data.find((i) => i.type === 'function_call_output');
      expect(output).to.deep.include({ call_id: 'call_1', output: INTERRUPTED_CALL_OUTPUT });
    });

    it('a conversation made for a first run that fails is deleted again', async () => {
      const agent = agentFor(running.emulator, { conversation: true });
      const thread = agent.getNewThread();
      running.emulator.injectFault({ kind: 'status', status: 500, path: '/v1/responses' });
      await agent.run('Hello', { thread }).catch(() => undefined);
      expect(thread.serviceThreadId).to.equal(undefined);
      await waitFor(() => running.emulator.requests.some((r) => r.method === 'DELETE' && r.path === '/v1/conversations/conv_1'));
      const gone = await rawClient(running.emulator).conversations.retrieve('conv_1').catch((e: unknown) => e);
      expect(gone).to.have.property('status', 404);
    });

    it('streams on a conversation and aborts on unsubscribe', async () => {
      const agent = agentFor(running.emulator, { conversation: true });
      const thread = agent.getNewThread();
      const texts = await lastValueFrom(agent.runStream('My name is Lin.', { thread }).pipe(toArray()));
      expect(texts.map((u) => u.text).join('')).to.equal('Nice to meet you, Lin!');
      expect(thread.serviceThreadId).to.equal('conv_1');
      running.emulator.injectFault({ kind: 'stall-stream', afterEvents: 3, path: '/v1/responses' });
      const subscription = agent.runStream("What's my name?", { thread }).subscribe({ error: () => undefined });
      await waitFor(() => responseBodies(running.emulator).length === 2);
      subscription.unsubscribe();
      await running.emulator.waitForAbortedStream();
      expect(thread.serviceThreadId).to.equal('conv_1');
    });
  });

  it('uses the ChatAgent API directly with the client constructed in code', async () => {
    const { OpenAIResponsesClient } = await import('skein/openai');
    const agent = new ChatAgent({
      chatClient: new OpenAIResponsesClient({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, model: 'gpt-test', maxRetries: 0, conversation: true }),
    });
    const thread = agent.getNewThread();
    await agent.run('My name is Kay.', { thread });
    expect(thread.serviceThreadId).to.match(/^conv_/);
    expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Kay.');
  });
});

/** Polls a condition the emulator reaches asynchronously (no timing assertion: it only waits). */
async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
