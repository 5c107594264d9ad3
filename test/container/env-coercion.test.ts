import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ChatAgent, agentToken, createContainer } from 'skein';
import type { OpenAIChatClient } from 'skein/openai';
import { problemsOf, writeConfig } from './config-test-helpers.js';
import { useEmulator } from '../support/emulator.js';

/** Issue 16 item 9: a whole-value `${VAR}` takes the type its setting expects. */
describe('createContainer(configFile): ${VAR} values typed by their setting', () => {
  let dir: string;
  const emu = useEmulator();
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'skein-env-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const write = (name: string, text: string) => writeConfig(dir, name, text);

  const yaml = `plugins:
  openai:
    apiKey: \${KEY:-test}
    baseURL: \${BASE_URL}
    maxRetries: \${RETRIES:-0}
    timeout: \${TIMEOUT:-30000}
agents:
  support:
    client: openai-chat
    model: \${MODEL}
    instructions: "Escalate to http://\${HOST}:8080 when stuck."
    temperature: \${TEMPERATURE:-0.5}
    maxToolIterations: \${MAX:-4}
    keepPartial: \${KEEP_PARTIAL:-true}
    history: { maxMessages: "\${HISTORY:-2}" }
  keeper:
    client: openai-responses
    model: m
    store: \${STORE:-false}
`;

  it('coerces numbers, integers and booleans (defaults too) and the agents work; partial references and string settings stay strings', async () => {
    const file = await write('typed.yaml', yaml);
    const env = { BASE_URL: emu.emulator.openaiBaseURL, MODEL: '4', HOST: '10.0.0.7', TIMEOUT: '45000' };
    const container = await createContainer(file, { env });
    const support = container.get(agentToken('support')) as ChatAgent;
    const sdk = (support.chatClient as OpenAIChatClient).client;
    expect(sdk.maxRetries).to.equal(0);
    expect(sdk.timeout).to.equal(45000);

    const thread = support.getNewThread();
    await support.run('one', { thread });
    await support.run('two', { thread });
    const reply = await support.run('three', { thread });
    const body = emu.emulator.requestsTo('/v1/chat/completions').at(-1)!.body as { model: unknown; temperature: unknown; messages: { role: string; content: string }[] };
    // A model named "4" is still a string; the temperature is a number.
    expect(body.model).to.equal('4');
    expect(body.temperature).to.equal(0.5);
    expect(body.messages[0]).to.deep.include({ role: 'system', content: 'Escalate to http://10.0.0.7:8080 when stuck.' });
    // history.maxMessages: 2 from "${HISTORY:-2}": the instructions, the last two messages, the input.
    expect(body.messages.map((m) => m.content)).to.deep.equal([
      'Escalate to http://10.0.0.7:8080 when stuck.',
      'two',
      'You said: "two" (I have seen 3 earlier messages.)',
      'three',
    ]);
    expect(reply.text).to.equal('You said: "three" (I have seen 3 earlier messages.)');

    // A provider option no schema describes reads as YAML would: store: false, a message-store thread.
    const keeper = container.get(agentToken('keeper'));
    const keeperThread = keeper.getNewThread();
    await keeper.run('hello', { thread: keeperThread });
    expect((emu.emulator.requestsTo('/v1/responses').at(-1)!.body as { store: unknown }).store).to.equal(false);
    expect(keeperThread.messageStore).to.not.equal(undefined);
  });

  it('reports a value that does not parse once, with its path, the reference and what it found', async () => {
    const file = await write('typed-bad.yaml', yaml);
    const env = { BASE_URL: emu.emulator.openaiBaseURL, MODEL: 'm', HOST: 'h', RETRIES: 'lots', MAX: 'abc', KEEP_PARTIAL: 'yes', TEMPERATURE: 'warm', HISTORY: '2.5' };
    const problems = await problemsOf(createContainer(file, { env }));
    expect(problems).to.have.members([
      'plugins.openai.maxRetries: expected an integer from ${RETRIES:-0} but found "lots". Set RETRIES to an integer.',
      'agents.support.temperature: expected a number from ${TEMPERATURE:-0.5} but found "warm". Set TEMPERATURE to a number.',
      'agents.support.maxToolIterations: expected an integer from ${MAX:-4} but found "abc". Set MAX to an integer.',
      'agents.support.keepPartial: expected true or false from ${KEEP_PARTIAL:-true} but found "yes". Set KEEP_PARTIAL to true or false.',
      'agents.support.history.maxMessages: expected an integer from ${HISTORY:-2} but found "2.5". Set HISTORY to an integer.',
    ]);
  });

  it('checks a coerced value like a literal one (a negative retry count is still too small), and JSON files coerce the same way', async () => {
    // module and export may come from the environment too; they stay strings and are not settings.
    const echo = await write('echo.json', JSON.stringify({ plugins: { echo: { module: '${ECHO_MODULE}', export: '${ECHO_EXPORT}', repeat: '${REPEAT}' } }, agents: { e: { client: 'echo-chat' } } }));
    const echoContainer = await createContainer(echo, { env: { ECHO_MODULE: fileURLToPath(new URL('./fixtures/echo-plugin.js', import.meta.url)), ECHO_EXPORT: 'echoPlugin', REPEAT: '2' } });
    expect((await echoContainer.get(agentToken('e')).run('hi')).text).to.equal('1');

    const file = await write(
      'typed.json',
      JSON.stringify({
        plugins: { openai: { apiKey: 'k', baseURL: '${BASE_URL}', maxRetries: '${RETRIES}' } },
        agents: { support: { client: 'openai-chat', model: 'm', maxOutputTokens: '${TOKENS}' } },
      }),
    );
    const problems = await problemsOf(createContainer(file, { env: { BASE_URL: emu.emulator.openaiBaseURL, RETRIES: '-1', TOKENS: '0' } }));
    expect(problems).to.have.length(2);
    expect(problems[0]).to.match(/^plugins\.openai\.maxRetries: Too small/);
    expect(problems[1]).to.equal('agents.support.maxOutputTokens: expected a positive integer, found 0.');

    const container = await createContainer(file, { env: { BASE_URL: emu.emulator.openaiBaseURL, RETRIES: '3', TOKENS: '64' } });
    const agent = container.get(agentToken('support')) as ChatAgent;
    expect((agent.chatClient as OpenAIChatClient).client.maxRetries).to.equal(3);
    await agent.run('hi');
    expect((emu.emulator.requestsTo('/v1/chat/completions').at(-1)!.body as { max_completion_tokens?: unknown; max_tokens?: unknown })).to.satisfy(
      (b: { max_completion_tokens?: unknown; max_tokens?: unknown }) => b.max_completion_tokens === 64 || b.max_tokens === 64,
    );
  });
});
