import { expect } from 'chai';
import OpenAI from 'openai';
import { emulatorPerTest } from '../support/emulator.js';

describe('Emulator: Assistants v2 routes through the openai SDK', () => {
  let client: OpenAI;

  const running = emulatorPerTest();
  beforeEach(() => {
    client = new OpenAI({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 });
  });

  it('lists messages newest first by default, pages with after/before, filters by run', async () => {
    const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'm0' }] });
    for (let i = 1; i < 5; i++) await client.beta.threads.messages.create(thread.id, { role: 'user', content: `m${i}` });
    const text = (m: OpenAI.Beta.Threads.Message) => (m.content[0]!.type === 'text' ? m.content[0]!.text.value : '');
    const first = await client.beta.threads.messages.list(thread.id, { limit: 2 });
    expect(first.data.map(text)).to.deep.equal(['m4', 'm3']);
    expect(first.has_more).to.equal(true);
    const all: string[] = [];
    for await (const m of client.beta.threads.messages.list(thread.id, { order: 'asc', limit: 2 })) all.push(text(m));
    expect(all).to.deep.equal(['m0', 'm1', 'm2', 'm3', 'm4']);
    const before = await client.beta.threads.messages.list(thread.id, { order: 'asc', before: first.data[1]!.id });
    expect(before.data.map(text)).to.deep.equal(['m0', 'm1', 'm2']);
  });

  it('moves a run through its statuses, with a poll hint, and refuses a second active run', async () => {
    const assistant = await client.beta.assistants.create({ model: 'm', instructions: 'Be kind.' });
    const thread = await client.beta.threads.create();
    const { data: run, response } = await client.beta.threads.runs
      .create(thread.id, { assistant_id: assistant.id, additional_messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(run.status).to.equal('queued');
    expect(response.headers.get('openai-poll-after-ms')).to.match(/^\d+$/);
    const second = await client.beta.threads.runs.create(thread.id, { assistant_id: assistant.id }).catch((e: unknown) => e);
    expect((second as { status: number }).status).to.equal(400);
    const seen: string[] = [run.status];
    let current = run;
    while (current.status !== 'completed') {
      current = await client.beta.threads.runs.retrieve(run.id, { thread_id: thread.id });
      seen.push(current.status);
    }
    expect(seen).to.deep.equal(['queued', 'in_progress', 'in_progress', 'completed']);
    const steps = await client.beta.threads.runs.steps.list(run.id, { thread_id: thread.id });
    expect(steps.data.map((s) => s.type)).to.deep.equal(['message_creation']);
    const [reply] = (await client.beta.threads.messages.list(thread.id, { run_id: run.id })).data;
    expect(reply!.role).to.equal('assistant');
  });

  it('streams a tool call as the service does: its id and name, then its arguments in thread.run.step.delta pieces, then requires_action; the SDK\'s snapshot holds the call once', async () => {
    const assistant = await client.beta.assistants.create({ model: 'm', tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }] });
    const thread = await client.beta.threads.create();
    const args = JSON.stringify({ city: 'Paris, in the north of France' });
    const stream = client.beta.threads.runs.stream(thread.id, { assistant_id: assistant.id, additional_messages: [{ role: 'user', content: `call get_weather ${args}` }] });
    const pieces: string[] = [];
    const events: string[] = [];
    let snapshot: OpenAI.Beta.Threads.Runs.RunStep | undefined;
    stream.on('event', ({ event }) => void events.push(event));
    stream.on('toolCallDelta', (delta) => void (delta.type === 'function' && pieces.push(delta.function?.arguments ?? '')));
    stream.on('runStepDelta', (_delta, step) => void (snapshot = step));
    const run = await stream.finalRun();
    expect(run.status).to.equal('requires_action');
    const [call] = run.required_action!.submit_tool_outputs.tool_calls;
    expect(events.filter((e) => e === 'thread.run.step.delta').length).to.be.greaterThan(2);
    expect(events.slice(events.indexOf('thread.run.step.created'))).to.deep.equal(['thread.run.step.created', 'thread.run.step.in_progress', ...events.filter((e) => e === 'thread.run.step.delta'), 'thread.run.requires_action']);
    expect(pieces.filter((p) => p !== '').length).to.be.greaterThan(2);
    expect(pieces.join('')).to.equal(args);
    const details = snapshot!.step_details as OpenAI.Beta.Threads.Runs.ToolCallsStepDetails;
    expect(details.tool_calls).to.deep.equal([{ index: 0, id: call!.id, type: 'function', function: { name: 'get_weather', arguments: args, output: null } }]);
  });

  it('rejects incomplete tool outputs with a 400 naming the expected call ids', async () => {
    const assistant = await client.beta.assistants.create({
      model: 'm',
      tools: [{ type: 'function', function: { name: 'a', parameters: { type: 'object' } } }, { type: 'function', function: { name: 'b', parameters: { type: 'object' } } }],
    });
    const thread = await client.beta.threads.create();
    const run = await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id, additional_messages: [{ role: 'user', content: 'call a {} and call b {}' }] });
    expect(run.status).to.equal('requires_action');
    expect(run.required_action!.submit_tool_outputs.tool_calls).to.have.length(2);
    const error = await client.beta.threads.runs
      .submitToolOutputs(run.id, { thread_id: thread.id, tool_outputs: [{ tool_call_id: run.required_action!.submit_tool_outputs.tool_calls[0]!.id, output: 'x' }] })
      .catch((e: unknown) => e);
    expect((error as { status: number; message: string }).status).to.equal(400);
    expect((error as Error).message).to.contain('call_');
  });
});
