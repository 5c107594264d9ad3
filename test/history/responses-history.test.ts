import { expect } from 'chai';
import { type AgentThread, type ChatAgent, type ChatMessage, ForkUnsupportedError, ServiceError, messageText } from 'skein';
import { RESPONSES_INPUT_ITEMS_LISTINGS } from 'skein/testing';
import { emulatorPerTest } from '../support/emulator.js';
import { readResponseChain } from '../../plugins/openai/responses-history.js';
import { agentFor, rawClient, responseBodies } from '../responses/fixture.js';
import { texts } from './history-fixtures.js';

/** Each function call's id once, each with exactly one result: a tool exchange is whole. */
function expectWholeToolExchanges(messages: readonly ChatMessage[]): void {
  const calls = messages.flatMap((m) => m.contents.flatMap((c) => (c.kind === 'function-call' ? [c.callId] : [])));
  const results = messages.flatMap((m) => m.contents.flatMap((c) => (c.kind === 'function-result' ? [c.callId] : [])));
  expect(results.slice().sort(), 'results').to.deep.equal(calls.slice().sort());
  expect(new Set(calls).size, 'calls').to.equal(calls.length);
}

/** Each message that carries a service id carries it once. */
function expectNoRepeats(messages: readonly ChatMessage[]): void {
  const ids = messages.flatMap((m) => (m.messageId === undefined ? [] : [m.messageId]));
  expect(new Set(ids).size, `ids ${ids.join(', ')}`).to.equal(ids.length);
}

/** Three turns with tool calls: a call, its result and the answer; plain words; another call. */
async function toolChain(agent: ChatAgent): Promise<AgentThread> {
  const thread = agent.getNewThread();
  await agent.run('call get_weather {"city":"Oslo"}', { thread });
  await agent.run('thanks', { thread });
  await agent.run('call get_weather {"city":"Rome"}', { thread });
  return thread;
}

// Run against both ways a server lists a continuing response's input_items: the service's (the
// whole context) and the request's own input only (some compatible servers).
for (const listing of RESPONSES_INPUT_ITEMS_LISTINGS) describe(`history: Responses service threads (real openai SDK against the emulator; input_items: ${listing})`, () => {
  const running = emulatorPerTest({ responsesInputItems: listing });

  async function names(conversation: boolean) {
    const agent = agentFor(running.emulator, conversation ? { conversation: true } : {});
    const thread = agent.getNewThread();
    await agent.run('my name is Ann', { thread });
    await agent.run('my name is Bob', { thread });
    await agent.run('what is my name?', { thread });
    return { agent, thread };
  }

  describe('previous_response_id chains', () => {
    it('getMessages reads the chain back from the service: inputs and outputs, oldest first, each reply with its response id', async () => {
      const { agent, thread } = await names(false);
      const messages = await agent.getMessages(thread);
      expect(texts(messages)).to.deep.equal([
        'user:my name is Ann',
        `assistant:${messageText(messages[1]!)}`,
        'user:my name is Bob',
        `assistant:${messageText(messages[3]!)}`,
        'user:what is my name?',
        'assistant:Your name is Bob.',
      ]);
      expect(messages[5]!.messageId).to.equal(thread.serviceThreadId);
      expect(texts(await agent.getMessages(thread, { limit: 2 }))).to.deep.equal(texts(messages.slice(4)));
    });

    it('forks natively: the fork continues from the response at the cut (previous_response_id), nothing copied, the original unchanged', async () => {
      const { agent, thread } = await names(false);
      const all = await agent.getMessages(thread);
      const origin = thread.serviceThreadId;
      const created = running.emulator.requestsTo('/v1/responses').length;
      const fork = await agent.forkThread(thread, { at: all[1]!.messageId! });
      expect(fork.serviceThreadId).to.equal(all[1]!.messageId);
      expect(running.emulator.requestsTo('/v1/responses').filter((r) => r.method === 'POST')).to.have.length(created);
      expect(running.emulator.requestsTo('/v1/conversations')).to.have.length(0);

      expect((await agent.run('what is my name?', { thread: fork })).text).to.equal('Your name is Ann.');
      expect(responseBodies(running.emulator).at(-1)!.previous_response_id).to.equal(all[1]!.messageId);
      expect(texts(await agent.getMessages(fork))).to.deep.equal([...texts(all.slice(0, 2)), 'user:what is my name?', 'assistant:Your name is Ann.']);
      expect(thread.serviceThreadId).to.equal(origin);
      expect(texts(await agent.getMessages(thread))).to.deep.equal(texts(all));
    });

    it('refuses a cut inside a response input with ForkUnsupportedError, creating nothing', async () => {
      const { agent, thread } = await names(false);
      const before = running.emulator.requests.filter((r) => r.method === 'POST').length;
      const error = await agent.forkThread(thread, { at: 2 }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(ForkUnsupportedError);
      expect((error as Error).message).to.contain('at: 1, 3, 5');
      expect(running.emulator.requests.filter((r) => r.method === 'POST').length).to.equal(before);
    });

    it('a cut on a tool call keeps its result and the answer to it', async () => {
      const agent = agentFor(running.emulator, { tools: ['get_weather'] });
      const thread = agent.getNewThread();
      await agent.run('call get_weather {"city":"Oslo"}', { thread });
      await agent.run('thanks', { thread });
      const all = await agent.getMessages(thread);
      expect(texts(all).slice(0, 3)).to.deep.equal(['user:call get_weather {"city":"Oslo"}', 'assistant:function-call', 'tool:function-result']);
      const fork = await agent.forkThread(thread, { at: 1 });
      expect(texts(await agent.getMessages(fork))).to.deep.equal(texts(all.slice(0, 4)));
    });

    it('deleting a fork deletes only its own responses; the origin reads and continues as before', async () => {
      const { agent, thread } = await names(false);
      const all = await agent.getMessages(thread);
      const fork = await agent.forkThread(thread, { at: 1 });
      await agent.run('what is my name?', { thread: fork });
      const own = fork.serviceThreadId!;
      const resumed = await agentFor(running.emulator).deserializeThread(JSON.parse(JSON.stringify(await fork.serialize())));
      await agentFor(running.emulator).deleteThread(resumed);
      const gone = await rawClient(running.emulator).responses.retrieve(own).catch((e: { status?: number }) => e.status);
      expect(gone).to.equal(404);
      expect(texts(await agent.getMessages(thread))).to.deep.equal(texts(all));
      expect((await agent.run('what is my name?', { thread })).text).to.equal('Your name is Bob.');
    });

    it('a three-turn chain reads back as exactly its six messages, each once', async () => {
      const { agent, thread } = await names(false);
      const messages = await agent.getMessages(thread);
      expect(messages).to.have.length(6);
      expect(messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
      expectNoRepeats(messages);
      // Every reply carries the id of the response that gave it, as the run returned it.
      const chain: string[] = [];
      for (let id: string | null = thread.serviceThreadId!; id; id = (await rawClient(running.emulator).responses.retrieve(id)).previous_response_id ?? null) chain.unshift(id);
      expect(messages.filter((m) => m.role === 'assistant').map((m) => m.messageId)).to.deep.equal(chain);
    });

    it('a chain with tool calls reads each call once, with its result, in the order the turns ran', async () => {
      const agent = agentFor(running.emulator, { tools: ['get_weather'] });
      const thread = await toolChain(agent);
      const messages = await agent.getMessages(thread);
      expect(texts(messages)).to.deep.equal([
        'user:call get_weather {"city":"Oslo"}',
        'assistant:function-call',
        'tool:function-result',
        `assistant:${messageText(messages[3]!)}`,
        'user:thanks',
        `assistant:${messageText(messages[5]!)}`,
        'user:call get_weather {"city":"Rome"}',
        'assistant:function-call',
        'tool:function-result',
        `assistant:${messageText(messages[9]!)}`,
      ]);
      expect(messageText(messages[3]!)).to.contain('sunny in Oslo');
      expect(messageText(messages[9]!)).to.contain('sunny in Rome');
      expectWholeToolExchanges(messages);
      expectNoRepeats(messages);
    });

    it('a fork at every index holds whole tool exchanges and exactly the history up to the response that ends there', async () => {
      const agent = agentFor(running.emulator, { tools: ['get_weather'] });
      const thread = await toolChain(agent);
      const all = await agent.getMessages(thread);
      const forked: number[] = [];
      for (let at = 0; at < all.length; at++) {
        const fork = await agent.forkThread(thread, { at }).catch((error: unknown) => {
          expect(error, `at ${at}`).to.be.instanceOf(ForkUnsupportedError);
          return undefined;
        });
        if (!fork) continue;
        forked.push(at);
        const held = await agent.getMessages(fork);
        expectWholeToolExchanges(held);
        expect(held.length, `at ${at}`).to.be.greaterThan(at);
        expect(texts(held), `at ${at}`).to.deep.equal(texts(all.slice(0, held.length)));
      }
      // Every reply ends a response; a cut on a call or its result moves on to the answer.
      expect(forked).to.deep.equal([1, 2, 3, 5, 7, 8, 9]);
    });

    it('a fork reads after its origin was deleted: what the service still holds, each item once', async () => {
      const { agent, thread } = await names(false);
      const all = await agent.getMessages(thread);
      const fork = await agent.forkThread(thread, { at: 1 });
      await agent.run('what is my name?', { thread: fork });
      await agent.deleteThread(thread);
      const held = await agent.getMessages(fork);
      expectNoRepeats(held);
      const own = ['user:what is my name?', 'assistant:Your name is Ann.'];
      // The service lists the fork's whole context with its last response; a server that lists
      // only each request's input held the shared start in the deleted responses alone.
      expect(texts(held)).to.deep.equal(listing === 'full-context' ? [...texts(all.slice(0, 2)), ...own] : own);
    });

    it('a chain longer than one page of input items reads whole and in order, with few requests (and with a small page limit)', async function () {
      this.timeout(60_000);
      const agent = agentFor(running.emulator);
      const thread = agent.getNewThread();
      const turns = 55;
      for (let i = 0; i < turns; i++) await agent.run(`message ${i}`, { thread });
      const before = running.emulator.requests.length;
      const messages = await agent.getMessages(thread);
      const reads = running.emulator.requests.slice(before);
      expect(messages).to.have.length(2 * turns);
      expect(messages.filter((m) => m.role === 'user').map(messageText)).to.deep.equal(Array.from({ length: turns }, (_, i) => `message ${i}`));
      expectNoRepeats(messages);
      const lists = reads.filter((r) => r.path.endsWith('/input_items'));
      expect(lists.every((r) => r.query.limit === '100')).to.equal(true);
      // The service: the newest response's list (109 items, two pages); else one list per response.
      expect(lists).to.have.length(listing === 'full-context' ? 2 : turns);
      expect(reads.filter((r) => r.method === 'GET' && /^\/v1\/responses\/[^/]+$/.test(r.path))).to.have.length(turns);

      const small = await readResponseChain(rawClient(running.emulator), thread.serviceThreadId!, undefined, { pageLimit: 7 });
      expect(texts(small.messages)).to.deep.equal(texts(messages));
      expect(small.responseEnds!.map((e) => e.count)).to.deep.equal(Array.from({ length: turns }, (_, i) => 2 * (i + 1)));
    });
  });

  it('compaction on a service thread is the service\'s: the `truncation` agent option reaches every request', async () => {
    const agent = agentFor(running.emulator, { truncation: 'auto' });
    const thread = agent.getNewThread();
    await agent.run('hello', { thread });
    await agent.run('again', { thread });
    expect(responseBodies(running.emulator).map((b) => b.truncation)).to.deep.equal(['auto', 'auto']);
  });

  describe('conversation threads (conversation: true)', () => {
    it('getMessages reads the conversation items, every page', async () => {
      const agent = agentFor(running.emulator, { conversation: true });
      const thread = agent.getNewThread();
      for (let i = 0; i < 12; i++) await agent.run(`message ${i}`, { thread });
      const messages = await agent.getMessages(thread);
      expect(messages).to.have.length(24);
      expect(messageText(messages[0]!)).to.equal('message 0');
      expect(messageText(messages[22]!)).to.equal('message 11');
    });

    it('a fork whose copy fails part way deletes the half-copied conversation and reports the typed error', async () => {
      const agent = agentFor(running.emulator, { conversation: true });
      const thread = agent.getNewThread();
      for (let i = 0; i < 12; i++) await agent.run(`message ${i}`, { thread });
      const all = await agent.getMessages(thread);
      // The create (the first 20 items) goes through; adding the rest fails.
      running.emulator.injectFault({ kind: 'latency', ms: 0, method: 'POST' });
      running.emulator.injectFault({ kind: 'status', status: 500, method: 'POST', message: 'items failed' });
      const error = await agent.forkThread(thread).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(ServiceError);
      const created = running.emulator.requests.filter((r) => r.method === 'POST' && r.path === '/v1/conversations').at(-1)!;
      expect((created.body as { items: unknown[] }).items).to.have.length(20);
      // The half-copied conversation is deleted before the error reaches the caller.
      const deletes = running.emulator.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith('/v1/conversations/'));
      expect(deletes).to.have.length(1);
      expect(deletes[0]!.path).to.not.contain(thread.serviceThreadId!);
      expect(texts(await agent.getMessages(thread))).to.deep.equal(texts(all));
    });

    it('forks into a new conversation with the items copied; the original conversation is unchanged', async () => {
      const { agent, thread } = await names(true);
      const all = await agent.getMessages(thread);
      const fork = await agent.forkThread(thread, { at: 2 });
      expect(fork.serviceThreadId).to.match(/^conv_/).and.not.equal(thread.serviceThreadId);
      expect(texts(await agent.getMessages(fork))).to.deep.equal(texts(all.slice(0, 3)));
      // The fork ends with the user's "my name is Bob" turn input: asking now continues from there.
      expect((await agent.run('what is my name?', { thread: fork })).text).to.equal('Your name is Bob.');
      const fork2 = await agent.forkThread(thread, { at: 1 });
      expect((await agent.run('what is my name?', { thread: fork2 })).text).to.equal('Your name is Ann.');
      expect(texts(await agent.getMessages(thread))).to.deep.equal(texts(all));
      await agent.deleteThread(fork2);
      expect(texts(await agent.getMessages(thread))).to.deep.equal(texts(all));
    });
  });
});
