import { expect } from 'chai';
import { lastValueFrom, toArray } from 'rxjs';
import { agentToken, ConfigurationError, createContainer, SerializationError } from 'skein';
import { OpenAIAssistantAgent, openaiPlugin } from 'skein/openai';
import { z } from 'zod';
import { emulatorClientPerTest } from '../support/emulator.js';

const Weather = z.object({ city: z.string(), degrees: z.number(), sunny: z.boolean() });
const weatherSchema = { type: 'object', properties: { city: { type: 'string' }, degrees: { type: 'number' } }, required: ['city', 'degrees'], additionalProperties: false };

describe('Assistants: responseFormat (JSON output) on the definition, the thread and the run', () => {
  const suite = emulatorClientPerTest();


  const runBodies = () => suite.emulator.requests.filter((r) => r.method === 'POST' && /^\/v1\/threads\/[^/]+\/runs$/.test(r.path)).map((r) => r.body as Record<string, unknown>);

  it('a zod schema on the definition: the assistant answers JSON that parses with that schema', async () => {
    const agent = await OpenAIAssistantAgent.create(suite.client, { model: 'gpt-test', name: 'forecaster', responseFormat: { type: 'json_schema', name: 'weather', schema: Weather } }, { polling: { intervalMs: 1 } });
    const stored = await suite.client.beta.assistants.retrieve(agent.id!);
    expect(stored.response_format).to.deep.include({ type: 'json_schema' });
    const answer = await agent.run('Weather in Oslo, 21 degrees?', { thread: agent.getNewThread() });
    const parsed = Weather.parse(JSON.parse(answer.text));
    expect(parsed).to.deep.equal({ city: parsed.city, degrees: 21, sunny: true });
    // Read back from the service, the definition holds the JSON Schema.
    const again = await OpenAIAssistantAgent.retrieve(suite.client, agent.id!);
    expect(again.definition.responseFormat).to.deep.include({ type: 'json_schema', name: 'weather' });
  });

  it('precedence: run > thread > definition, as every other option; streaming too', async () => {
    const agent = await OpenAIAssistantAgent.create(
      suite.client,
      { model: 'gpt-test', name: 'p', executionOptions: { responseFormat: 'json_object' } },
      { polling: { intervalMs: 1 } },
    );
    const plain = agent.getNewThread();
    const first = await agent.run('hello', { thread: plain });
    expect(JSON.parse(first.text)).to.have.property('answer').that.contains('hello');

    const thread = await agent.createThread({ executionOptions: { responseFormat: { type: 'json_schema', name: 'weather', schema: weatherSchema } } });
    const second = await agent.run('Oslo is 12', { thread });
    expect(JSON.parse(second.text)).to.have.keys(['city', 'degrees']);
    expect(runBodies().at(-1)!.response_format).to.deep.equal({ type: 'json_schema', json_schema: { name: 'weather', schema: weatherSchema } });

    const third = await agent.run('just talk', { thread, invocationOptions: { responseFormat: 'text' } });
    expect(third.text).to.contain('You said: "just talk"');

    // The thread's format travels with the serialized thread; streamed answers are JSON too.
    const resumed = await agent.deserializeThread(JSON.parse(JSON.stringify(await thread.serialize())));
    const updates = await lastValueFrom(agent.runStream('Bergen is 9', { thread: resumed }).pipe(toArray()));
    expect(JSON.parse(updates.map((u) => u.text).join(''))).to.deep.include({ degrees: 9 });
  });

  it('a bad format is a typed error naming its path, before any request', async () => {
    const agent = await OpenAIAssistantAgent.create(suite.client, { model: 'gpt-test', name: 'q' }, { polling: { intervalMs: 1 } });
    const before = suite.emulator.requests.length;
    const error = await agent
      .run('x', { thread: agent.getNewThread(), invocationOptions: { responseFormat: { type: 'json_schema', name: 'has space', schema: weatherSchema } } })
      .catch((e: unknown) => e);
    expect(error).to.be.instanceOf(SerializationError);
    expect((error as SerializationError).path).to.equal('invocationOptions.responseFormat.name');
    const threadError = await agent.createThread({ executionOptions: { responseFormat: 'yaml' as never } }).catch((e: unknown) => e);
    expect(threadError).to.be.instanceOf(SerializationError);
    expect((threadError as SerializationError).path).to.equal('executionOptions.responseFormat');
    expect(suite.emulator.requests.length).to.equal(before);
  });

  it('from config: responseFormat on the agent; a bad one is a ConfigurationError', async () => {
    const container = createContainer({
      plugins: [openaiPlugin({ apiKey: 'test', baseURL: suite.emulator.openaiBaseURL, maxRetries: 0 })],
      agents: { json: { client: 'openai-assistants', model: 'gpt-test', responseFormat: 'json_object', polling: { intervalMs: 1 } } },
    });
    const agent = container.get(agentToken('json')) as OpenAIAssistantAgent;
    const answer = await agent.run('hi', { thread: agent.getNewThread() });
    expect(JSON.parse(answer.text)).to.have.property('answer');
    const bad = createContainer({
      plugins: [openaiPlugin({ apiKey: 'test', baseURL: suite.emulator.openaiBaseURL })],
      agents: { json: { client: 'openai-assistants', model: 'gpt-test', responseFormat: { type: 'xml' } } },
    });
    expect(() => bad.get(agentToken('json'))).to.throw(ConfigurationError, /agents\.json\.responseFormat/);
  });

  it('the emulator refuses a malformed response_format as the service does', async () => {
    const assistant = await suite.client.beta.assistants.create({ model: 'gpt-test' });
    const thread = await suite.client.beta.threads.create();
    const error = await suite.client.beta.threads.runs
      .create(thread.id, { assistant_id: assistant.id, response_format: { type: 'json_schema' } as never })
      .catch((e: unknown) => e as { status: number });
    expect((error as { status: number }).status).to.equal(400);
  });
});
