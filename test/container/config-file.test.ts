import { expect } from 'chai';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChatAgent, agentToken, createContainer } from 'skein';
import { OpenAIChatClient } from 'skein/openai';
import { problemsOf, writeConfig } from './config-test-helpers.js';
import { useEmulator } from '../support/emulator.js';

const fixture = fileURLToPath(new URL('./fixtures/echo-plugin.js', import.meta.url));

describe('createContainer(configFile)', () => {
  let dir: string;
  const emu = useEmulator({ apiKey: 'sk-from-env' });
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skein-config-'));
  });

  const write = (name: string, text: string) => writeConfig(dir, name, text);

  it('wires plugins and agents from YAML with ${ENV} secrets, and the agent talks to the service', async () => {
    const file = await write(
      'skein.yaml',
      `plugins:
  openai:
    apiKey: \${TEST_OPENAI_KEY}
    baseURL: \${TEST_BASE_URL}
    maxRetries: 0
agents:
  assistant:
    client: openai-chat
    model: \${TEST_MODEL:-gpt-4.1}
    instructions: You are a helpful assistant
`,
    );
    const container = await createContainer(file, { env: { TEST_OPENAI_KEY: 'sk-from-env', TEST_BASE_URL: emu.emulator.openaiBaseURL } });
    const agent = container.get(agentToken('assistant'));
    const thread = agent.getNewThread();
    await agent.run('My name is Alice', { thread });
    expect((await agent.run("What's my name?", { thread })).text).to.equal('Your name is Alice.');
    expect((emu.emulator.requests.at(-1)!.body as { model: string }).model).to.equal('gpt-4.1');
  });

  it('reads JSON too, and loads a third-party plugin by module path', async () => {
    const file = await write(
      'skein.json',
      JSON.stringify({ plugins: { echo: { module: fixture, export: 'echoPlugin', prefix: 'seen:' } }, agents: { e: { client: 'echo-chat' } } }),
    );
    const container = await createContainer(file);
    expect((await container.get(agentToken('e')).run('hi')).text).to.equal('seen:1');
  });

  it('reports every problem in one error, each with its path', async () => {
    const file = await write(
      'bad.yaml',
      `plugins:
  openai:
    apiKey: \${MISSING_KEY}
    maxRetries: many
  mongo: {}
agents:
  a:
    client: openai-responses-typo
  b:
    client: openai-chat
    temperature: hot
`,
    );
    const problems = await problemsOf(createContainer(file, { env: {} }));
    expect(problems.some((p) => p.startsWith('plugins.openai.apiKey: environment variable MISSING_KEY is not set'))).to.equal(true);
    expect(problems.some((p) => p.startsWith('plugins.openai.maxRetries:'))).to.equal(true);
    expect(problems.some((p) => p.startsWith('plugins.mongo: unknown plugin "mongo"'))).to.equal(true);
    expect(problems.some((p) => p.startsWith('agents.a.client: no loaded plugin provides client "openai-responses-typo"'))).to.equal(true);
    expect(problems.some((p) => p.startsWith('agents.b.temperature:'))).to.equal(true);
  });

  it('names a missing key, an unreadable file and a syntax error clearly', async () => {
    const missing = await write('missing.json', JSON.stringify({ agents: { a: { model: 'x' } } }));
    expect((await problemsOf(createContainer(missing)))[0]).to.match(/^agents\.a\.client: /);
    expect((await problemsOf(createContainer(path.join(dir, 'nope.yaml'))))[0]).to.match(/Cannot read config file .*nope\.yaml/);
    const broken = await write('broken.json', '{ "plugins": ');
    expect((await problemsOf(createContainer(broken)))[0]).to.match(/broken\.json is not valid JSON/);
  });

  it('serves child containers per tenant over a shared parent', async () => {
    const parentFile = await write('parent.yaml', `plugins:\n  openai:\n    apiKey: k\n    baseURL: ${emu.emulator.openaiBaseURL}\nagents:\n  assistant:\n    client: openai-chat\n    model: base\n`);
    const parent = await createContainer(parentFile);
    const tenantFile = await write('tenant.yaml', `plugins:\n  openai:\n    apiKey: sk-from-env\n    baseURL: ${emu.emulator.openaiBaseURL}\nagents:\n  assistant:\n    client: openai-chat\n    model: tenant-model\n`);
    const tenant = await createContainer(tenantFile, { parent });
    const agent = tenant.get(agentToken('assistant')) as ChatAgent;
    expect(agent.chatClient).to.be.instanceOf(OpenAIChatClient);
    await agent.run('hello');
    expect((emu.emulator.requests.at(-1)!.body as { model: string }).model).to.equal('tenant-model');
    expect(parent.get(agentToken('assistant'))).to.not.equal(agent);
  });
});
