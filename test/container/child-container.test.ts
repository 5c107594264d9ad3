import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Container } from 'inversify';
import { type ChatAgent, ChatClient, ConfigurationError, agentToken, createContainer } from 'skein';
import { OpenAIAssistantAgent, openaiPlugin } from 'skein/openai';
import { sqliteStorePlugin } from 'skein/store-sqlite';
import { echoPlugin } from './fixtures/echo-plugin.js';
import { useEmulator } from '../support/emulator.js';

const ECHO_PLUGIN = fileURLToPath(new URL('./fixtures/echo-plugin.js', import.meta.url));

/** Issue 16 item 11: a child container's agents may use the clients and stores its parent provides. */
describe('createContainer({ parent }): children use what their parent provides', () => {
  let dir: string;
  const emu = useEmulator();
  let parent: Container;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skein-child-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    parent = createContainer({
      plugins: [openaiPlugin({ apiKey: 'k', baseURL: emu.emulator.openaiBaseURL, maxRetries: 0 }), sqliteStorePlugin({ path: path.join(dir, `p-${Date.now()}.db`) })],
      agents: { support: { client: 'openai-chat', model: 'base-model' } },
    });
  });

  const lastModel = () => (emu.emulator.requestsTo('/v1/chat/completions').at(-1)!.body as { model: string }).model;

  it('overrides only an agent: the child agent runs on the parent\'s client', async () => {
    const child = createContainer({ parent, agents: { support: { client: 'openai-chat', model: 'tenant-model', instructions: 'You serve tenant A.' } } });
    const agent = child.get(agentToken('support')) as ChatAgent;
    const thread = agent.getNewThread();
    await agent.run('My name is Ann', { thread });
    expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Ann.');
    expect(lastModel()).to.equal('tenant-model');
    // One client, the parent's: its connection pool and settings are shared.
    expect(agent.chatClient).to.equal((parent.get(agentToken('support')) as ChatAgent).chatClient);
    expect(child.get(ChatClient, { name: 'openai-chat' })).to.equal(agent.chatClient);
  });

  it('uses a store the parent provides, also when the child loads plugins of its own', async () => {
    const perRequest = () =>
      createContainer({
        parent,
        plugins: [echoPlugin({ prefix: 'echo:' })],
        agents: {
          durable: { client: 'openai-chat', model: 'm', messageStore: 'sqlite' },
          echo: { client: 'echo-chat' },
        },
      });
    const first = perRequest().get(agentToken('durable'));
    const thread = first.getNewThread();
    await first.run('My name is Bo', { thread });
    const saved = await thread.serialize();
    expect(saved.$type).to.equal('sqlite');
    expect(JSON.stringify(saved)).not.to.contain('Bo');
    // The next request's child resumes it from its key alone, through the parent's store.
    const next = perRequest();
    const resumed = await next.get(agentToken('durable')).deserializeThread(JSON.parse(JSON.stringify(saved)));
    expect((await next.get(agentToken('durable')).run("What's my name?", { thread: resumed })).text).to.equal('Your name is Bo.');
    expect((await next.get(agentToken('echo')).run('hi')).text).to.equal('echo:1');
  });

  it('reaches a grandparent through a parent that has clients of its own, and a config file child works the same', async () => {
    const middle = createContainer({ parent, plugins: [echoPlugin({})] });
    const leaf = createContainer({ parent: middle, agents: { support: { client: 'openai-chat', model: 'leaf-model' }, helper: { client: 'openai-assistants', model: 'leaf-model' } } });
    await leaf.get(agentToken('support')).run('hello');
    expect(lastModel()).to.equal('leaf-model');
    expect(leaf.get(agentToken('helper'))).to.be.instanceOf(OpenAIAssistantAgent);

    const tenantFile = path.join(dir, 'tenant.yaml');
    await writeFile(tenantFile, `plugins:\n  echo: { module: ${JSON.stringify(ECHO_PLUGIN)}, export: echoPlugin }\nagents:\n  support: { client: openai-chat, model: file-model, messageStore: sqlite }\n`);
    const fromFile = await createContainer(tenantFile, { parent: middle });
    await fromFile.get(agentToken('support')).run('hello');
    expect(lastModel()).to.equal('file-model');
  });

  it('still rejects a client or store that neither the child nor any parent provides', () => {
    let error: unknown;
    try {
      createContainer({ parent, agents: { lost: { client: 'openai-chatt', messageStore: 'redis' } } });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(ConfigurationError);
    expect((error as ConfigurationError).problems).to.deep.equal([
      'agents.lost.client: no loaded plugin (here or in the parent container) provides client "openai-chatt"; loaded clients: openai-chat, openai-responses, openai-assistants. Add the plugin that provides it to config.plugins.',
      'agents.lost.messageStore: no loaded plugin (here or in the parent container) provides store "redis"; available stores: in-memory, sqlite.',
    ]);
  });
});
