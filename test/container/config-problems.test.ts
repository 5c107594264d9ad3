import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILTIN_PLUGINS, type PluginFactory, createContainer } from 'skein';
import { problemsOf as problemsOfPromise, writeConfig } from './config-test-helpers.js';

const ECHO = fileURLToPath(new URL('./fixtures/echo-plugin.js', import.meta.url));

/** Issue 16 item 10: one problem, one message: the root cause, once. */
describe('createContainer(configFile): one message per root cause', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skein-problems-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  let count = 0;
  const problemsOf = async (text: string) => problemsOfPromise(createContainer(await writeConfig(dir, `c${count++}.yaml`, text), { env: {} }));

  it('a built-in plugin with one bad setting is reported once, not again by each of its agents', async () => {
    const problems = await problemsOf(`plugins:
  openai: { apiKey: k, maxRetries: many }
agents:
  chat: { client: openai-chat, model: m }
  research: { client: openai-responses, model: m }
  helper: { client: openai-assistants, model: m }
`);
    expect(problems).to.have.length(1);
    expect(problems[0]).to.match(/^plugins\.openai\.maxRetries: /);
  });

  it('an unset variable is one message, even where a schema would also call the empty value too short, and when used twice', async () => {
    const problems = await problemsOf(`plugins:
  openai: { apiKey: "\${OPENAI_KEY}", baseURL: "http://\${API_HOST}/v1" }
agents:
  chat: { client: openai-chat, model: m, instructions: "You run on \${API_HOST}." }
`);
    expect(problems).to.deep.equal([
      'plugins.openai.apiKey: environment variable OPENAI_KEY is not set (referenced as ${OPENAI_KEY}). Set it, or give a default: ${OPENAI_KEY:-value}.',
      'plugins.openai.baseURL: environment variable API_HOST is not set (referenced as ${API_HOST}; also used at agents.chat.instructions). Set it, or give a default: ${API_HOST:-value}.',
    ]);
  });

  it('a third-party plugin that fails (bad setting, missing module) is its only problem; its agents are not reported', async () => {
    const badSetting = await problemsOf(`plugins:
  echo: { module: ${JSON.stringify(ECHO)}, export: echoPlugin, repeat: -1 }
agents:
  a: { client: echo-chat }
  b: { client: echo-chat }
  typo: { client: echo-chatt }
`);
    // The plugin declares its clients, so a client it does not provide is still a problem of its own.
    expect(badSetting).to.have.length(2);
    expect(badSetting[0]).to.match(/^plugins\.echo\.repeat: /);
    expect(badSetting[1]).to.match(/^agents\.typo\.client: no loaded plugin provides client "echo-chatt"/);

    const missing = await problemsOf(`plugins:
  acme: { module: ./not-there.js }
agents:
  a: { client: acme-chat }
`);
    expect(missing).to.have.length(1);
    expect(missing[0]).to.match(/^plugins\.acme\.module: cannot import "\.\/not-there\.js"/);
  });

  it('a misspelt built-in plugin is one problem suggesting the right id, and its agents are not reported', async () => {
    const problems = await problemsOf(`plugins:
  opnai: { apiKey: k }
agents:
  chat: { client: openai-chat }
`);
    expect(problems).to.deep.equal([
      'plugins.opnai: unknown plugin "opnai"; did you mean "openai"? Built-in plugins: openai, sqlite, redis, postgres, azure-ai-agents, a2a, telemetry, mcp, ag-ui, dbos. For a third-party plugin add "module: <package or path>".',
    ]);
  });

  it('independent problems are all still reported, each once', async () => {
    const problems = await problemsOf(`plugins:
  openai: { apiKey: k, baseURL: 42 }
  mystery: {}
agents:
  helper: { client: openai-chat, temperature: warm }
  other: { client: nobody-provides-this, messageStore: nowhere }
`);
    expect(problems.map((p) => p.slice(0, p.indexOf(':')))).to.deep.equal([
      'plugins.openai.baseURL',
      'plugins.mystery',
      'agents.helper.temperature',
      'agents.other.client',
      'agents.other.messageStore',
    ]);
  });

  it('knows what each built-in plugin provides (the table that keeps their agents quiet when one fails)', async () => {
    const minimal: Record<string, Record<string, unknown>> = {
      sqlite: { path: ':memory:' },
      redis: { url: 'redis://127.0.0.1:6379' },
      postgres: { connectionString: 'postgres://127.0.0.1/test' },
      'azure-ai-agents': { client: {} },
      mcp: { servers: { files: { command: 'node' } } },
      dbos: { systemDatabaseUrl: 'postgres://127.0.0.1/test' },
    };
    for (const [id, builtin] of Object.entries(BUILTIN_PLUGINS)) {
      const factory = ((await import(builtin.module)) as Record<string, PluginFactory>)[builtin.export]!;
      const plugin = factory(minimal[id] ?? {});
      const toolPrefixes = plugin.toolReferences ? [plugin.toolReferences.prefix] : [];
      expect({ id, clients: plugin.clients ?? [], stores: plugin.stores ?? [], toolPrefixes }).to.deep.equal({
        id,
        clients: builtin.clients ?? [],
        stores: builtin.stores ?? [],
        toolPrefixes: builtin.toolPrefixes ?? [],
      });
    }
  });
});
