import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import { type ChatMessage, InMemoryChatMessageStore } from 'skein';
import { emulatorPerTest } from '../support/emulator.js';
import { agentFor, rawClient, responseBodies, serializedMidToolExchange, viaJson } from './fixture.js';

describe('Responses: message-store threads (store: false)', () => {
  const running = emulatorPerTest();

  it('keeps history in the thread and sends it in full, with store: false', async () => {
    const agent = agentFor(running.emulator, { store: false });
    expect(agent.threadKind).to.equal('message-store');
    const thread = agent.getNewThread();
    expect(thread.messageStore).to.be.instanceOf(InMemoryChatMessageStore);
    const first = await agent.run('My name is Ada.', { thread });
    expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ada.');
    expect(thread.serviceThreadId).to.equal(undefined);

    const [, second] = responseBodies(running.emulator);
    expect(second!.store).to.equal(false);
    expect(second!.previous_response_id).to.equal(undefined);
    expect(second!.conversation).to.equal(undefined);
    expect(second!.input).to.deep.equal([
      { type: 'message', role: 'user', content: 'My name is Ada.' },
      { type: 'message', role: 'assistant', content: 'Nice to meet you, Ada!' },
      { type: 'message', role: 'user', content: "What's my name?" },
    ]);
    // Nothing was stored on the service.
    const stored = await rawClient(running.emulator).responses.retrieve(first.responseId!).catch((e: unknown) => e);
    expect(stored).to.have.property('status', 404);
  });

  it('serializes the messages and resumes in a new container', async () => {
    const thread = agentFor(running.emulator, { store: false }).getNewThread();
    await agentFor(running.emulator, { store: false }).run('My name is Grace.', { thread });
    const json = viaJson(await thread.serialize()) as { $type: string; store: { messages: ChatMessage[] } };
    expect(json.$type).to.equal('in-memory');
    expect(json.store.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant']);

    const other = agentFor(running.emulator, { store: false });
    const resumed = await other.deserializeThread(json);
    expect((await other.run("What's my name?", { thread: resumed })).text).to.equal('Your name is Grace.');
  });

  it('keeps call ids and fc_ item ids through serialize -> deserialize and sends them back', async () => {
    const agent = agentFor(running.emulator, { store: false, tools: ['get_weather'] });
    const thread = agent.getNewThread();
    await agent.run('call get_weather {"city":"Paris"}', { thread });
    const json = viaJson(await thread.serialize()) as { store: { messages: ChatMessage[] } };
    const call = json.store.messages[1]!.contents[0]!;
    expect(call).to.deep.equal({ kind: 'function-call', callId: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', additionalProperties: { itemId: 'fc_1' } });
    expect(json.store.messages[2]!.contents[0]).to.include({ kind: 'function-result', callId: 'call_1' });

    const other = agentFor(running.emulator, { store: false, tools: ['get_weather'] });
    const resumed = await other.deserializeThread(json);
    expect((await other.run('What did we talk about?', { thread: resumed })).text).to.contain('call get_weather');
    const last = responseBodies(running.emulator).at(-1)!;
    expect(last.input.slice(1, 3)).to.deep.equal([
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', id: 'fc_1' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny in Paris' },
    ]);
  });

  it('resumes a thread serialized in the middle of a tool exchange', async () => {
    const agent = agentFor(running.emulator, { store: false });
    const thread = agent.getNewThread();
    await agent.run('My name is Ada.', { thread });
    const { saved } = await serializedMidToolExchange(agent, thread);
    const other = agentFor(running.emulator, { store: false });
    const resumed = await other.deserializeThread(saved);
    expect((await other.run("What's my name?", { thread: resumed })).text).to.equal('Your name is Ada.');
    expect(await resumed.messageStore!.listMessages()).to.have.length(4);
  });

  it('streams and aborts on unsubscribe, leaving the store unchanged', async () => {
    const agent = agentFor(running.emulator, { store: false });
    const thread = agent.getNewThread();
    const updates = await lastValueFrom(agent.runStream('My name is Ada.', { thread }).pipe(toArray()));
    expect(updates.map((u) => u.text).join('')).to.equal('Nice to meet you, Ada!');
    expect(await thread.messageStore!.listMessages()).to.have.length(2);

    running.emulator.injectFault({ kind: 'stall-stream', afterEvents: 4, path: '/v1/responses' });
    await new Promise<void>((resolve) => {
      const subscription = agent.runStream('Tell me more', { thread }).subscribe({
        next: (update) => {
          if (update.responseId) {
            subscription.unsubscribe();
            resolve();
          }
        },
      });
    });
    await running.emulator.waitForAbortedStream();
    expect(await thread.messageStore!.listMessages()).to.have.length(2);
  });

  it('deleteThread clears the store and calls nothing on the service', async () => {
    const agent = agentFor(running.emulator, { store: false });
    const thread = agent.getNewThread();
    await agent.run('My name is Ada.', { thread });
    const before = running.emulator.requests.length;
    await agent.deleteThread(thread);
    expect(await thread.messageStore!.listMessages()).to.deep.equal([]);
    expect(running.emulator.requests.length).to.equal(before);
  });

  it('the client-level store option picks the kind too', async () => {
    const { OpenAIResponsesClient } = await import('skein/openai');
    const client = new OpenAIResponsesClient({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, store: false });
    expect(client.threadKindFor({})).to.equal('message-store');
    expect(client.threadKindFor({ additionalProperties: { store: true } })).to.equal('service');
    expect(new OpenAIResponsesClient({ apiKey: 'test' }).threadKindFor({})).to.equal('service');
  });
});
