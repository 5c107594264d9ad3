import { expect } from 'chai';
import { ContainerModule, injectable } from 'inversify';
import sinon from 'sinon';
import {
  ChatAgent,
  ChatClient,
  ChatMessageStoreFactory,
  ConfigurationError,
  SerializationError,
  StoreThreadSerializer,
  ThreadSerializer,
  agentToken,
  checkShape,
  createContainer,
  type ChatMessage,
  type ChatMessageStore,
  type ChatResponse,
  type JsonObject,
  type SkeinPlugin,
  type StoreRestoreContext,
} from 'skein';
import { openaiPlugin, OpenAIChatClient } from 'skein/openai';
import { FakeChatClient } from 'skein/testing';

/** A custom store: messages live in a shared "database" map; the thread serializes only its key. */
const database = new Map<string, ChatMessage[]>();
class MapStore implements ChatMessageStore {
  readonly type = 'map-db';
  constructor(readonly key: string) {}
  async listMessages() {
    return [...(database.get(this.key) ?? [])];
  }
  async addMessages(messages: readonly ChatMessage[]) {
    database.set(this.key, [...(database.get(this.key) ?? []), ...messages]);
  }
  async serialize(): Promise<JsonObject> {
    return { key: this.key };
  }
  async clear() {
    database.delete(this.key);
  }
}
@injectable()
class MapStoreFactory implements ChatMessageStoreFactory {
  readonly type = 'map-db';
  readonly version = 1;
  #next = 0;
  create() {
    return new MapStore(`t${++this.#next}-${Date.now()}`);
  }
  restore(state: JsonObject, context: StoreRestoreContext) {
    const checked = checkShape(state, context.path, { required: { key: 'string' } });
    return new MapStore(checked.key as string);
  }
}
const mapStorePlugin: SkeinPlugin = {
  id: 'map-db',
  stores: ['map-db'],
  module: new ContainerModule(({ bind }) => {
    bind(MapStoreFactory).toSelf().inSingletonScope();
    bind(ChatMessageStoreFactory).toDynamicValue((c) => c.get(MapStoreFactory)).whenNamed('map-db');
    bind(ThreadSerializer).toDynamicValue((c) => new StoreThreadSerializer(c.get(MapStoreFactory)));
  }),
};

const reply = (text: string): ChatResponse => ({ messages: [{ role: 'assistant', contents: [{ kind: 'text', text }] }] });

describe('createContainer', () => {
  const config = () => ({
    plugins: [openaiPlugin({ apiKey: 'k', baseURL: 'http://127.0.0.1:9/v1' })],
    agents: { assistant: { client: 'openai-chat', model: 'gpt-4.1', instructions: 'Hi' } },
  });

  it('resolves a configured agent by token, wired to the plugin client', () => {
    const container = createContainer(config());
    const agent = container.get(agentToken('assistant'));
    expect(agent).to.be.instanceOf(ChatAgent);
    expect((agent as ChatAgent).chatClient).to.be.instanceOf(OpenAIChatClient);
    expect(agent.name).to.equal('assistant');
    expect(container.get(agentToken('assistant'))).to.equal(agent);
  });

  it('lets a test rebind ChatClient to a sinon stub the agent then uses', async () => {
    const container = createContainer(config());
    container.snapshot();
    const stub = new FakeChatClient({ providerId: 'openai-chat' });
    const getResponse = sinon.stub(stub, 'getResponse').resolves(reply('stubbed'));
    container.rebind(ChatClient).toConstantValue(stub);
    const agent = container.get(agentToken('assistant'));
    const r = await agent.run('hello');
    expect(r.text).to.equal('stubbed');
    sinon.assert.calledOnce(getResponse);
    expect(getResponse.firstCall.args[1]).to.include({ model: 'gpt-4.1', instructions: 'Hi' });
    container.restore();
    expect((container.get(agentToken('assistant')) as ChatAgent).chatClient).to.be.instanceOf(OpenAIChatClient);
    sinon.restore();
  });

  it('registers a custom message-store plugin whose state survives serialize -> deserialize', async () => {
    const make = () => {
      const container = createContainer({
        plugins: [openaiPlugin({ apiKey: 'k' }), mapStorePlugin],
        agents: { assistant: { client: 'openai-chat', model: 'm', messageStore: 'map-db' } },
      });
      const fake = new FakeChatClient({ providerId: 'openai-chat' });
      container.rebind(ChatClient).toConstantValue(fake);
      return { agent: container.get(agentToken('assistant')), fake };
    };
    const first = make();
    first.fake.reply('one').reply('two');
    const thread = first.agent.getNewThread();
    await first.agent.run('a', { thread });
    await first.agent.run('b', { thread });
    const serialized = JSON.parse(JSON.stringify(await thread.serialize()));
    expect(serialized.$type).to.equal('map-db');
    expect(serialized.store).to.have.keys(['key']);

    const second = make();
    second.fake.reply('three');
    const resumed = await second.agent.deserializeThread(serialized);
    await second.agent.run('c', { thread: resumed });
    expect(second.fake.calls[0]!.messages.map((m) => m.contents[0])).to.deep.equal([
      { kind: 'text', text: 'a' },
      { kind: 'text', text: 'one' },
      { kind: 'text', text: 'b' },
      { kind: 'text', text: 'two' },
      { kind: 'text', text: 'c' },
    ]);
    expect(database.get(serialized.store.key)).to.have.length(6);
    await second.agent.deserializeThread({ ...serialized, store: { key: 5 } }).then(
      () => expect.fail('expected SerializationError'),
      (e: Error) => expect(e).to.be.instanceOf(SerializationError).and.have.property('path', '$.store.key'),
    );
  });

  it('reports every config problem at once, each with its path', () => {
    let error: ConfigurationError | undefined;
    try {
      createContainer({
        plugins: [openaiPlugin({ apiKey: 'k' })],
        agents: {
          a: { client: 'anthropic-chat' },
          b: { client: 'openai-chat', messageStore: 'mongo' },
          c: { client: 'openai-chat', temperature: 'hot' as never },
        },
      });
    } catch (e) {
      error = e as ConfigurationError;
    }
    expect(error).to.be.instanceOf(ConfigurationError);
    expect(error!.problems).to.have.length(3);
    expect(error!.problems[0]).to.match(/^agents\.a\.client: no loaded plugin provides client "anthropic-chat"; loaded clients: openai-chat/);
    expect(error!.problems[1]).to.match(/^agents\.b\.messageStore: .*"mongo"/);
    expect(error!.problems[2]).to.match(/^agents\.c\.temperature: /);
  });

  it('rejects something that is not a plugin, and a plugin loaded twice', () => {
    expect(() => createContainer({ plugins: [{ id: 'x' } as never] })).to.throw(ConfigurationError, /plugins\[0\]: expected a SkeinPlugin/);
    expect(() => createContainer({ plugins: [openaiPlugin(), openaiPlugin()] })).to.throw(ConfigurationError, /loaded twice/);
  });

  it('passes unknown agent keys to the client as provider options, and config tools to the agent', async () => {
    const { tool } = await import('skein');
    const { z } = await import('zod');
    const ping = tool({ name: 'ping', parameters: z.object({}), execute: () => 'pong' });
    const container = createContainer({
      plugins: [openaiPlugin({ apiKey: 'k' })],
      tools: [ping],
      agents: { a: { client: 'openai-chat', model: 'm', tools: ['ping'], user: 'tenant-7' } },
    });
    const fake = new FakeChatClient({ providerId: 'openai-chat' }).reply('ok');
    container.rebind(ChatClient).toConstantValue(fake);
    await container.get(agentToken('a')).run('x');
    expect(fake.calls[0]!.options.additionalProperties).to.deep.equal({ user: 'tenant-7' });
    expect(fake.calls[0]!.options.tools!.map((t) => t.name)).to.deep.equal(['ping']);
  });

  it('supports child containers per tenant that override a parent binding', async () => {
    const parent = createContainer(config());
    const child = createContainer({ parent, plugins: [openaiPlugin({ apiKey: 'tenant-key' })], agents: { assistant: { client: 'openai-chat', model: 'tenant-model' } } });
    const fake = new FakeChatClient({ providerId: 'openai-chat' }).reply('tenant');
    child.rebind(ChatClient).toConstantValue(fake);
    expect((await child.get(agentToken('assistant')).run('x')).text).to.equal('tenant');
    expect((parent.get(agentToken('assistant')) as ChatAgent).chatClient).to.be.instanceOf(OpenAIChatClient);
  });
});

describe('createContainer contributions', () => {
  it('hands middleware and context providers bound in the container to every ChatAgent, in binding order', async () => {
    const { AgentRunMiddleware, ContextProvider } = await import('skein');
    const order: string[] = [];
    const container = createContainer({ plugins: [openaiPlugin({ apiKey: 'k' })], agents: { a: { client: 'openai-chat', model: 'm' } } });
    for (const name of ['first', 'second']) {
      container.bind(AgentRunMiddleware).toConstantValue({
        async onRun(_context: unknown, next: () => Promise<unknown>) {
          order.push(name);
          return next();
        },
      });
    }
    container.bind(ContextProvider).toConstantValue({ id: 'note', invoking: () => ({ instructions: 'Remember the note.' }) });
    const fake = new FakeChatClient({ providerId: 'openai-chat' }).reply('ok');
    container.rebind(ChatClient).toConstantValue(fake);
    await container.get(agentToken('a')).run('x');
    expect(order).to.deep.equal(['first', 'second']);
    expect(fake.calls[0]!.options.instructions).to.equal('Remember the note.');
  });
});

describe('createContainer history limits', () => {
  it('applies `history.maxMessages` to what the model is sent, keeping the stored history whole', async () => {
    const container = createContainer({
      plugins: [openaiPlugin({ apiKey: 'k' })],
      agents: { a: { client: 'openai-chat', model: 'm', history: { maxMessages: 2 } } },
    });
    const fake = new FakeChatClient({ providerId: 'openai-chat' }).reply('one').reply('two').reply('three');
    container.rebind(ChatClient).toConstantValue(fake);
    const agent = container.get(agentToken('a'));
    const thread = agent.getNewThread();
    for (const text of ['first', 'second', 'third']) await agent.run(text, { thread });
    expect(fake.calls[2]!.messages.map((m) => (m.contents[0] as { text: string }).text)).to.deep.equal(['second', 'two', 'third']);
    expect(await thread.messageStore!.listMessages()).to.have.length(6);
  });

  it('rejects a malformed history limit with its path', () => {
    expect(() =>
      createContainer({ plugins: [openaiPlugin({ apiKey: 'k' })], agents: { a: { client: 'openai-chat', history: { maxMessages: 0 } } } }),
    ).to.throw(ConfigurationError, /agents\.a\.history: expected an object with a positive integer maxMessages/);
  });
});
