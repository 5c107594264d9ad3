import { join } from 'node:path';
import { expect } from 'chai';
import { ChatAgent, MessageCountReducer, ThreadConflictError, agentToken, createContainer, messageText } from 'skein';
import { OpenAIChatClient, openaiPlugin } from 'skein/openai';
import { SqliteChatMessageStoreFactory, sqliteStorePlugin } from 'skein/store-sqlite';
import { Emulator } from 'skein/testing';
import { tempDir } from './services.js';

describe('End to end: a ChatAgent on Chat Completions keeps its history in SQLite', function () {
  this.timeout(30_000);
  let emulator: Emulator;
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  const factories: SqliteChatMessageStoreFactory[] = [];

  function container() {
    const c = createContainer({
      plugins: [openaiPlugin({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0 }), sqliteStorePlugin({ path })],
      agents: { bot: { client: 'openai-chat', model: 'emulated', messageStore: 'sqlite' } },
    });
    factories.push(c.get(SqliteChatMessageStoreFactory));
    return c;
  }

  beforeEach(async () => {
    emulator = await Emulator.start();
    dir = tempDir();
    path = join(dir.path, 'threads.db');
  });

  afterEach(async () => {
    for (const f of factories.splice(0)) f.close();
    await emulator.stop();
    dir.remove();
  });

  it('remembers across turns, serializes only the key, and continues in a new container', async () => {
    const agent = container().get(agentToken('bot'));
    const thread = agent.getNewThread();
    expect((await agent.run('My name is Ada.', { thread })).text).to.equal('Nice to meet you, Ada!');
    expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ada.');

    const json = JSON.stringify(await thread.serialize());
    const serialized = JSON.parse(json) as { $type: string; store: Record<string, unknown> };
    expect(serialized.$type).to.equal('sqlite');
    expect(Object.keys(serialized.store)).to.deep.equal(['key']);
    expect(json).to.not.include('Ada');

    // Another process: a new container on the same database file.
    const other = container().get(agentToken('bot'));
    const resumed = await other.deserializeThread(JSON.parse(json));
    expect((await other.run('What is my name?', { thread: resumed })).text).to.equal('Your name is Ada.');
    expect((await resumed.messageStore!.listMessages()).map(messageText)).to.deep.equal([
      'My name is Ada.',
      'Nice to meet you, Ada!',
      "What's my name?",
      'Your name is Ada.',
      'What is my name?',
      'Your name is Ada.',
    ]);

    await other.deleteThread(resumed);
    expect(await (await agent.deserializeThread(JSON.parse(json))).messageStore!.listMessages()).to.deep.equal([]);
  });

  it('refuses a turn that raced another instance, leaving the thread as the winner left it', async () => {
    const agent = container().get(agentToken('bot'));
    const thread = agent.getNewThread();
    await agent.run('My name is Ada.', { thread });
    const state = JSON.parse(JSON.stringify(await thread.serialize()));
    const a = await container().get(agentToken('bot')).deserializeThread(state);
    const b = await container().get(agentToken('bot')).deserializeThread(state);
    const aAgent = container().get(agentToken('bot'));
    // Run A's turn fully between B's read and B's write: B's append must fail.
    const bStore = b.messageStore!;
    const originalAdd = bStore.addMessages.bind(bStore);
    bStore.addMessages = async (messages) => {
      await aAgent.run('My name is Bob.', { thread: a });
      return originalAdd(messages);
    };
    const error = await agent.run("What's my name?", { thread: b }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(ThreadConflictError);
    const stored = (await thread.messageStore!.listMessages()).map(messageText);
    expect(stored).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!', 'My name is Bob.', 'Nice to meet you, Bob!']);
    // The policy: reload and run the turn again.
    bStore.addMessages = originalAdd;
    const retried = await agent.deserializeThread(state);
    expect((await agent.run("What's my name?", { thread: retried })).text).to.equal('Your name is Bob.');
  });

  it('sends a reduced history when the agent has a chatReducer, keeping the full history stored', async () => {
    const factory = new SqliteChatMessageStoreFactory({ path });
    factories.push(factory);
    const agent = new ChatAgent({
      chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'emulated' }),
      chatMessageStoreFactory: factory,
      chatReducer: new MessageCountReducer(2),
    });
    const thread = agent.getNewThread();
    for (const text of ['one', 'two', 'three']) await agent.run(text, { thread });
    expect((await agent.run('four', { thread })).text).to.equal('You said: "four" (I have seen 2 earlier messages.)');
    expect(await thread.messageStore!.listMessages()).to.have.length(8);
  });
});
