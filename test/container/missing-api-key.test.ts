import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigurationError, agentToken, createContainer } from 'skein';
import { OpenAIChatClient, OpenAIResponsesClient, openaiPlugin } from 'skein/openai';
import { useEmulator } from '../support/emulator.js';

const KEY_VARIABLES = ['OPENAI_API_KEY', 'OPENAI_ADMIN_KEY', 'AZURE_OPENAI_API_KEY', 'OPENAI_API_VERSION', 'AZURE_OPENAI_ENDPOINT', 'OPENAI_BASE_URL'];

function thrown(build: () => unknown): ConfigurationError {
  let error: unknown;
  try {
    build();
  } catch (e) {
    error = e;
  }
  expect(error, 'expected a ConfigurationError').to.be.instanceOf(ConfigurationError);
  return error as ConfigurationError;
}

/** Issue 16 item 8: no API key is a ConfigurationError naming the setting and the variable. */
describe('OpenAI clients without an API key', () => {
  const saved: Record<string, string | undefined> = {};
  let dir: string;
  const emu = useEmulator();
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skein-nokey-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    for (const name of KEY_VARIABLES) {
      saved[name] = process.env[name];
      delete process.env[name];
    }
  });
  afterEach(() => {
    for (const name of KEY_VARIABLES) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it('new OpenAIChatClient / new OpenAIResponsesClient name apiKey and OPENAI_API_KEY', () => {
    for (const [client, build] of [
      ['openai-chat', () => new OpenAIChatClient({ baseURL: emu.emulator.openaiBaseURL })],
      ['openai-responses', () => new OpenAIResponsesClient({ baseURL: emu.emulator.openaiBaseURL })],
    ] as const) {
      const error = thrown(build);
      expect(error.message).to.equal(
        `The ${client} client has no OpenAI API key: set the apiKey option (plugins.openai.apiKey in a config file, e.g. apiKey: \${OPENAI_API_KEY}) or the OPENAI_API_KEY environment variable.`,
      );
    }
  });

  it('takes the key from OPENAI_API_KEY, as the SDK does, and then talks to the service', async () => {
    process.env.OPENAI_API_KEY = 'sk-from-env';
    const client = new OpenAIChatClient({ baseURL: emu.emulator.openaiBaseURL, model: 'm' });
    const response = await client.getResponse([{ role: 'user', contents: [{ kind: 'text', text: 'ping' }] }]);
    expect(response.messages[0]!.contents[0]).to.deep.include({ kind: 'text' });
    expect(emu.emulator.requestsTo('/v1/chat/completions').at(-1)!.headers.authorization).to.equal('Bearer sk-from-env');
  });

  it('the Azure variant names its own settings and variables (key, API version, endpoint)', () => {
    const noKey = thrown(() => OpenAIChatClient.azure({ endpoint: 'https://example.openai.azure.com', apiVersion: '2024-10-21', deployment: 'gpt' }));
    expect(noKey.problems).to.deep.equal([
      'The openai-chat client (Azure OpenAI) has no credential: set the apiKey option (or azureADTokenProvider) or the AZURE_OPENAI_API_KEY environment variable.',
    ]);
    const nothing = thrown(() => OpenAIChatClient.azure({ deployment: 'gpt' }));
    expect(nothing.problems).to.have.length(3);
    expect(nothing.message).to.contain('OPENAI_API_VERSION').and.contain('AZURE_OPENAI_API_KEY').and.contain('AZURE_OPENAI_ENDPOINT');
  });

  it('resolving an agent of a container whose openai plugin has no key throws the ConfigurationError, not the SDK error', async () => {
    const container = createContainer({ plugins: [openaiPlugin({ baseURL: emu.emulator.openaiBaseURL })], agents: { a: { client: 'openai-chat', model: 'm' }, r: { client: 'openai-responses', model: 'm' } } });
    expect(thrown(() => container.get(agentToken('a'))).message).to.contain('OPENAI_API_KEY');
    expect(thrown(() => container.get(agentToken('r'))).message).to.contain('The openai-responses client has no OpenAI API key');

    const file = path.join(dir, 'nokey.yaml');
    await writeFile(file, `plugins:\n  openai: { baseURL: "${emu.emulator.openaiBaseURL}" }\nagents:\n  a: { client: openai-chat, model: m }\n`);
    const fromFile = await createContainer(file);
    expect(thrown(() => fromFile.get(agentToken('a'))).message).to.contain('plugins.openai.apiKey');
  });

  it('an openai-assistants agent without a key is the same ConfigurationError, before any request', async () => {
    const before = emu.emulator.requests.length;
    const container = createContainer({ plugins: [openaiPlugin({ baseURL: emu.emulator.openaiBaseURL })], agents: { helper: { client: 'openai-assistants', model: 'm', instructions: 'Be brief.' } } });
    let error: unknown;
    try {
      const agent = container.get(agentToken('helper'));
      await agent.run('hi');
    } catch (e) {
      error = e;
    }
    expect(error, 'expected a ConfigurationError').to.be.instanceOf(ConfigurationError);
    expect((error as Error).message).to.contain('has no OpenAI API key').and.contain('OPENAI_API_KEY');
    expect(emu.emulator.requests.length).to.equal(before);
  });
});
