import { expect } from 'chai';
import { ForkUnsupportedError, ServiceError, messageText } from 'skein';
import { Emulator } from 'skein/testing';
import { agentFor, rawClient, responseBodies } from '../responses/fixture.js';
import { texts } from './history-fixtures.js';


describe('history: Responses service threads (real openai SDK against the emulator)', () => {
  let emulator: Emulator;
  beforeEach(async () => {
    emulator = await Emulator.start();
  });
  afterEach(() => emulator.stop());

  async function names(conversation: boolean) {
    const agent = agentFor(emulator, conversation ? { conversation: true } : {});
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
      const created = emulator.requestsTo('/v1/responses').length;
      const fork = await agent.forkThread(thread, { at: all[1]!.messageId! });
      expect(fork.serviceThreadId).to.equal(all[1]!.messageId);
      expect(emulator.requestsTo('/v1/responses').filter((r) => r.method === 'POST')).to.have.length(created);
      expect(emulator.requestsTo('/v1/conversations')).to.have.length(0);

      expect((await agent.run('what is my name?', { thread: fork })).text).to.equal('Your name is Ann.');
      expect(responseBodies(emulator).at(-1)!.previous_response_id).to.equal(all[1]!.messageId);
      expect(texts(await agent.getMessages(fork))).to.deep.equal([...texts(all.slice(0, 2)), 'user:what is my name?', 'assistant:Your name is Ann.']);
      expect(thread.serviceThreadId).to.equal(origin);
      expect(texts(await agent.getMessages(thread))).to.deep.equal(texts(all));
    });

    it('refuses a cut inside a response input with ForkUnsupportedError, creating nothing', async () => {
      const { agent, thread } = await names(false);
      const before = emulator.requests.filter((r) => r.method === 'POST').length;
      const error = await agent.forkThread(thread, { at: 2 }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(ForkUnsupportedError);
      expect((error as Error).message).to.contain('at: 1, 3, 5');
      expect(emulator.requests.filter((r) => r.method === 'POST').length).to.equal(before);
    });

    it('a cut on a tool call keeps its result and the answer to it', async () => {
      const agent = agentFor(emulator, { tools: ['get_weather'] });
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
      const resumed = await agentFor(emulator).deserializeThread(JSON.parse(JSON.stringify(await fork.serialize())));
      await agentFor(emulator).deleteThread(resumed);
      const gone = await rawClient(emulator).responses.retrieve(own).catch((e: { status?: number }) => e.status);
      expect(gone).to.equal(404);
      expect(texts(await agent.getMessages(thread))).to.deep.equal(texts(all));
      expect((await agent.run('what is my name?', { thread })).text).to.equal('Your name is Bob.');
    });
  });

  it('compaction on a service thread is the service\'s: the `truncation` agent option reaches every request', async () => {
    const agent = agentFor(emulator, { truncation: 'auto' });
    const thread = agent.getNewThread();
    await agent.run('hello', { thread });
    await agent.run('again', { thread });
    expect(responseBodies(emulator).map((b) => b.truncation)).to.deep.equal(['auto', 'auto']);
  });

  describe('conversation threads (conversation: true)', () => {
    it('getMessages reads the conversation items, every page', async () => {
      const agent = agentFor(emulator, { conversation: true });
      const thread = agent.getNewThread();
      for (let i = 0; i < 12; i++) await agent.run(`message ${i}`, { thread });
      const messages = await agent.getMessages(thread);
      expect(messages).to.have.length(24);
      expect(messageText(messages[0]!)).to.equal('message 0');
      expect(messageText(messages[22]!)).to.equal('message 11');
    });

    it('a fork whose copy fails part way deletes the half-copied conversation and reports the typed error', async () => {
      const agent = agentFor(emulator, { conversation: true });
      const thread = agent.getNewThread();
      for (let i = 0; i < 12; i++) await agent.run(`message ${i}`, { thread });
      const all = await agent.getMessages(thread);
      // The create (the first 20 items) goes through; adding the rest fails.
      emulator.injectFault({ kind: 'latency', ms: 0, method: 'POST' });
      emulator.injectFault({ kind: 'status', status: 500, method: 'POST', message: 'items failed' });
      const error = await agent.forkThread(thread).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(ServiceError);
      const created = emulator.requests.filter((r) => r.method === 'POST' && r.path === '/v1/conversations').at(-1)!;
      expect((created.body as { items: unknown[] }).items).to.have.length(20);
      // The half-copied conversation is deleted before the error reaches the caller.
      const deletes = emulator.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith('/v1/conversations/'));
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
