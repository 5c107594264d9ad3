import { expect } from 'chai';
import { z } from 'zod';
import {
  ChatAgent,
  HistoryPositionError,
  InMemoryChatMessageStoreFactory,
  agentToken,
  approvalResponse,
  createContainer,
  forkCount,
  messageText,
  tool,
  type AIAgent,
  type ChatMessage,
  type ChatMessageStore,
  type ChatMessageStoreFactory,
  type JsonObject,
} from 'skein';
import { OpenAIChatClient, openaiPlugin } from 'skein/openai';
import { texts } from './history-fixtures.js';
import { deleteFileTool } from '../support/example-tools.js';
import { useEmulator } from '../support/emulator.js';

interface Body {
  messages: { role: string; content: unknown }[];
}


describe('history: getMessages and forkThread on message-store threads (ChatAgent, Chat Completions on the emulator)', () => {
  const emu = useEmulator();

  const client = () => new OpenAIChatClient({ apiKey: 'k', baseURL: emu.emulator.openaiBaseURL, model: 'gpt-4.1', maxRetries: 0 });
  const lastBody = () => emu.emulator.requestsTo('/v1/chat/completions').at(-1)!.body as Body;
  const lookup = tool({ name: 'lookup_order', description: 'Looks up an order', parameters: z.object({ id: z.string() }), execute: ({ id }) => `order ${id} shipped` });

  async function conversation(agent: AIAgent) {
    const thread = agent.getNewThread();
    await agent.run('my name is Ann', { thread });
    await agent.run('my name is Bob', { thread });
    await agent.run('what is my name?', { thread });
    return thread;
  }

  describe('getMessages', () => {
    it('returns the conversation oldest first, with limit and before (index or messageId) to page back', async () => {
      const agent = new ChatAgent({ chatClient: client() });
      const thread = await conversation(agent);
      const all = await agent.getMessages(thread);
      expect(texts(all)).to.deep.equal(texts(await thread.messageStore!.listMessages()));
      expect(all).to.have.length(6);
      expect(messageText(all[0]!)).to.equal('my name is Ann');
      expect(messageText(all[5]!)).to.equal('Your name is Bob.');
      expect(texts(await agent.getMessages(thread, { limit: 2 }))).to.deep.equal(texts(all.slice(4)));
      expect(texts(await agent.getMessages(thread, { limit: 2, before: 4 }))).to.deep.equal(texts(all.slice(2, 4)));
      expect(texts(await agent.getMessages(thread, { before: 6 }))).to.deep.equal(texts(all));
      const withId = all.find((m) => m.messageId !== undefined)!;
      expect(withId, 'the service gave its reply an id').to.not.equal(undefined);
      const index = all.indexOf(withId);
      expect(texts(await agent.getMessages(thread, { before: withId.messageId! }))).to.deep.equal(texts(all.slice(0, index)));
    });

    it('rejects a position that is not in the thread with HistoryPositionError saying what exists', async () => {
      const agent = new ChatAgent({ chatClient: client() });
      const thread = await conversation(agent);
      for (const before of [7, -1, 1.5, 'msg_nope']) {
        const error = await agent.getMessages(thread, { before }).catch((e: unknown) => e);
        expect(error).to.be.instanceOf(HistoryPositionError);
        expect((error as Error).message).to.match(/6 messages/);
      }
      const error = await agent.getMessages(thread, { limit: -3 }).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(HistoryPositionError);
      expect(await agent.getMessages(thread)).to.have.length(6);
    });

    it('reads an unstarted thread as empty', async () => {
      const agent = new ChatAgent({ chatClient: client() });
      expect(await agent.getMessages(agent.getNewThread())).to.deep.equal([]);
    });
  });

  describe('forkThread', () => {
    it('forks the whole history by default into an independent thread; the original is never changed', async () => {
      const agent = new ChatAgent({ chatClient: client() });
      const thread = await conversation(agent);
      const before = JSON.stringify(await thread.serialize());
      const fork = await agent.forkThread(thread);
      expect(texts(await agent.getMessages(fork))).to.deep.equal(texts(await agent.getMessages(thread)));
      await agent.run('my name is Cid', { thread: fork });
      expect(await agent.getMessages(fork)).to.have.length(8);
      expect(JSON.stringify(await thread.serialize())).to.equal(before);
      await agent.run('and now?', { thread });
      expect(await agent.getMessages(fork)).to.have.length(8);
    });

    it('forks at an index or a messageId: the model sees only the history up to that message', async () => {
      const agent = new ChatAgent({ chatClient: client() });
      const thread = await conversation(agent);
      const all = await agent.getMessages(thread);
      const fork = await agent.forkThread(thread, { at: 1 });
      expect(texts(await agent.getMessages(fork))).to.deep.equal(texts(all.slice(0, 2)));
      const reply = await agent.run('what is my name?', { thread: fork });
      expect(reply.text).to.equal('Your name is Ann.');
      expect(lastBody().messages.map((m) => m.content)).to.deep.equal(['my name is Ann', messageText(all[1]!), 'what is my name?']);

      const byId = all[3]!.messageId!;
      const fork2 = await agent.forkThread(thread, { at: byId });
      expect(texts(await agent.getMessages(fork2))).to.deep.equal(texts(all.slice(0, 4)));
      expect((await agent.run('what is my name?', { thread: fork2 })).text).to.equal('Your name is Bob.');
    });

    it('refuses a position that is not in the thread, creating nothing', async () => {
      const agent = new ChatAgent({ chatClient: client() });
      const thread = await conversation(agent);
      for (const at of [6, 'nope']) {
        const error = await agent.forkThread(thread, { at }).catch((e: unknown) => e);
        expect(error).to.be.instanceOf(HistoryPositionError);
      }
    });

    it('never separates a tool call from its result: a cut on the call takes its result too', async () => {
      const agent = new ChatAgent({ chatClient: client(), tools: [lookup] });
      const thread = agent.getNewThread();
      await agent.run('call lookup_order {"id":"42"}', { thread });
      await agent.run('thanks', { thread });
      const all = await agent.getMessages(thread);
      expect(texts(all).slice(0, 3)).to.deep.equal(['user:call lookup_order {"id":"42"}', 'assistant:function-call', 'tool:function-result']);
      const fork = await agent.forkThread(thread, { at: 1 });
      expect(texts(await agent.getMessages(fork))).to.deep.equal(texts(all.slice(0, 3)));
      // The fork is a valid conversation: the service accepts it (it rejects a call without its result).
      await agent.run('again?', { thread: fork });
    });

    it("a fork copies the thread's other state all the way down: changing one's never changes the other's", async () => {
      const agent = new ChatAgent({ chatClient: client() });
      const thread = agent.getNewThread();
      await agent.run('my name is Ann', { thread });
      thread.state = { ...thread.state, app: { cart: { items: ['tea'] } } };
      const fork = await agent.forkThread(thread);
      expect(fork.state.app).to.deep.equal({ cart: { items: ['tea'] } });
      ((fork.state.app as { cart: { items: string[] } }).cart.items).push('milk');
      expect(thread.state.app).to.deep.equal({ cart: { items: ['tea'] } });
      ((thread.state.app as { cart: { items: string[] } }).cart.items).push('sugar');
      expect(fork.state.app).to.deep.equal({ cart: { items: ['tea', 'milk'] } });
    });

    it('a fork of a thread waiting for approval ends before that turn and carries no pending approval; the original can still be approved', async () => {
      const deleted: string[] = [];
      const deleteFile = deleteFileTool(deleted);
      const agent = new ChatAgent({ chatClient: client(), tools: [deleteFile] });
      const thread = agent.getNewThread();
      await agent.run('my name is Ann', { thread });
      const first = await agent.run('call delete_file {"path":"/tmp/a"}', { thread });
      expect(first.approvalRequests).to.have.length(1);
      const fork = await agent.forkThread(thread);
      expect(texts(await agent.getMessages(fork))).to.deep.equal(texts((await agent.getMessages(thread)).slice(0, 2)));
      expect(fork.state.pendingApprovals).to.equal(undefined);
      expect(thread.state.pendingApprovals).to.have.length(1);
      // The fork goes on without the pending call; the original is approved and runs the tool once.
      await agent.run('what is my name?', { thread: fork });
      await agent.run(approvalResponse(first.approvalRequests[0]!, true), { thread });
      expect(deleted).to.deep.equal(['/tmp/a']);
    });

    it('forks of forks, serialized and resumed in another container, deleted without touching their origin', async () => {
      const config = {
        plugins: [openaiPlugin({ apiKey: 'k', baseURL: emu.emulator.openaiBaseURL, maxRetries: 0 })],
        agents: { helper: { client: 'openai-chat', model: 'gpt-4.1' } },
      };
      const agent = createContainer(config).get<AIAgent>(agentToken('helper'));
      const thread = await conversation(agent);
      const fork = await agent.forkThread(thread, { at: 3 });
      const forkOfFork = await agent.forkThread(fork, { at: 1 });
      expect(await agent.getMessages(forkOfFork)).to.have.length(2);

      const other = createContainer(config).get<AIAgent>(agentToken('helper'));
      const resumed = await other.deserializeThread(JSON.parse(JSON.stringify(await forkOfFork.serialize())));
      expect((await other.run('what is my name?', { thread: resumed })).text).to.equal('Your name is Ann.');
      await other.deleteThread(resumed);
      expect(await other.getMessages(resumed)).to.deep.equal([]);
      expect(await agent.getMessages(fork)).to.have.length(4);
      expect(await agent.getMessages(thread)).to.have.length(6);
    });

    it('forks a thread kept by a third-party store (only listMessages/addMessages) through the contract', async () => {
      const made: ListOnlyStore[] = [];
      const factory: ChatMessageStoreFactory = {
        type: 'list-only',
        version: 1,
        create: () => {
          const store = new ListOnlyStore();
          made.push(store);
          return store;
        },
        restore: () => new ListOnlyStore(),
      };
      const agent = new ChatAgent({ chatClient: client(), chatMessageStoreFactory: factory });
      const thread = await conversation(agent);
      const fork = await agent.forkThread(thread, { at: 3 });
      expect(made).to.have.length(2);
      expect(made[1]!.appends, 'one addMessages with the copied history').to.equal(1);
      expect(texts(await agent.getMessages(fork))).to.deep.equal(texts((await agent.getMessages(thread)).slice(0, 4)));
      expect(await agent.getMessages(thread)).to.have.length(6);
    });

    it('forks an unstarted thread into a new unstarted thread', async () => {
      const agent = new ChatAgent({ chatClient: client(), chatMessageStoreFactory: new InMemoryChatMessageStoreFactory() });
      const fork = await agent.forkThread(agent.getNewThread());
      expect(await agent.getMessages(fork)).to.deep.equal([]);
      await agent.run('hello', { thread: fork });
      expect(await agent.getMessages(fork)).to.have.length(2);
    });
  });

  describe('forkCount (where a fork is cut)', () => {
    const user = (text: string): ChatMessage => ({ role: 'user', contents: [{ kind: 'text', text }] });
    const assistant = (text: string, extra?: JsonObject): ChatMessage => ({ role: 'assistant', contents: [{ kind: 'text', text }], ...(extra ? { additionalProperties: extra } : {}) });
    it('ends before a turn whose reply is partial (a failed run with keepPartial)', () => {
      const history = [user('a'), assistant('A'), user('b'), assistant('B-part', { partial: true })];
      expect(forkCount(history, undefined)).to.equal(2);
      expect(forkCount(history, 2)).to.equal(3);
      expect(forkCount(history, 1)).to.equal(2);
    });
  });
});

/** A store with nothing but the contract's required methods, like a third-party one. */
class ListOnlyStore implements ChatMessageStore {
  readonly type = 'list-only';
  appends = 0;
  #messages: ChatMessage[] = [];
  async listMessages(): Promise<ChatMessage[]> {
    return [...this.#messages];
  }
  async addMessages(messages: readonly ChatMessage[]): Promise<void> {
    this.appends++;
    this.#messages.push(...messages);
  }
  async serialize(): Promise<JsonObject> {
    return {};
  }
  async clear(): Promise<void> {
    this.#messages = [];
  }
}
