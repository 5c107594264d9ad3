import { AgentsClient } from '@azure/ai-agents';
import { expect } from 'chai';
import { createEmulatorAgentsClient, emulatorProjectEndpoint, staticTokenCredential } from 'skein/azure-ai-agents';
import { foundryProjectEndpoint } from 'skein/testing';
import { emulatorPerTest } from '../support/emulator.js';

describe('Emulator: Foundry Agents wire format', () => {
  let client: AgentsClient;
  const base = () => `${running.emulator.url}/api/projects/emulated`;

  const running = emulatorPerTest();
  beforeEach(() => {
    client = createEmulatorAgentsClient(running.emulator.url, { clientOptions: { retryOptions: { maxRetries: 0 } } });
  });

  it('gives the SDK an https project endpoint that the loopback client rewrites to http', async () => {
    expect(foundryProjectEndpoint(running.emulator.url)).to.equal(emulatorProjectEndpoint(running.emulator.url));
    expect(foundryProjectEndpoint(running.emulator.url)).to.match(/^https:\/\/127\.0\.0\.1:\d+\/api\/projects\/emulated$/);
    const agent = await client.createAgent('gpt-4o', { name: 'wire' });
    expect(agent.id).to.equal('asst_1');
    expect(running.emulator.requests[0]).to.deep.include({ method: 'POST', path: '/api/projects/emulated/assistants', query: { 'api-version': 'v1' } });
  });

  it('is refused by the SDK over plain http, as the real pipeline refuses bearer tokens without TLS', async () => {
    const plain = new AgentsClient(`${running.emulator.url}/api/projects/emulated`, staticTokenCredential(), { retryOptions: { maxRetries: 0 } });
    try {
      await plain.createAgent('gpt-4o');
      expect.fail('expected the SDK to refuse');
    } catch (error) {
      expect((error as Error).message).to.match(/non-TLS|https/i);
    }
  });

  it('requires api-version and answers without it with the error envelope', async () => {
    const response = await fetch(`${base()}/assistants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m"}' });
    expect(response.status).to.equal(400);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body.error).to.deep.include({ param: 'api-version', code: 'missing_api_version', type: 'invalid_request_error' });
    expect(body.error.message).to.be.a('string');
  });

  it('answers every success with 200, arrays as arrays and Unix-second timestamps', async () => {
    const post = (path: string, body: unknown) =>
      fetch(`${base()}${path}?api-version=v1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const agentReply = await post('/assistants', { model: 'gpt-4o' });
    expect(agentReply.status).to.equal(200);
    const agent = (await agentReply.json()) as Record<string, unknown>;
    expect(agent.tools).to.deep.equal([]);
    expect(agent.created_at).to.be.a('number').within(Date.now() / 1000 - 60, Date.now() / 1000 + 1);
    const threadReply = await post('/threads', { messages: [{ role: 'user', content: 'hi' }] });
    expect(threadReply.status).to.equal(200);
    const thread = (await threadReply.json()) as { id: string };
    const list = (await (await fetch(`${base()}/threads/${thread.id}/messages?api-version=v1`)).json()) as { data: { content: unknown[] }[] };
    expect(list.data[0].content).to.deep.equal([{ type: 'text', text: { value: 'hi', annotations: [] } }]);
    const run = (await (await post(`/threads/${thread.id}/runs`, { assistant_id: agent.id })).json()) as Record<string, unknown>;
    expect(run).to.deep.include({ status: 'queued', tools: [], object: 'thread.run' });
  });

  it('refuses new messages while a run is active, and outputs for calls it did not ask for', async () => {
    const agent = await client.createAgent('gpt-4o', {
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    const thread = await client.threads.create({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }] });
    let run = await client.runs.create(thread.id, agent.id);
    try {
      await client.messages.create(thread.id, 'user', 'again');
      expect.fail('expected a refusal');
    } catch (error) {
      expect((error as Error).message).to.match(/while a run run_1 is active/);
    }
    while (run.status !== 'requires_action') run = await client.runs.get(thread.id, run.id);
    try {
      await client.runs.submitToolOutputs(thread.id, run.id, [{ toolCallId: 'call_999', output: 'x' }]);
      expect.fail('expected a refusal');
    } catch (error) {
      expect((error as Error).message).to.match(/call_999.*not a pending tool call/);
    }
    run = await client.runs.submitToolOutputs(thread.id, run.id, [{ toolCallId: 'call_1', output: 'Rainy' }]);
    while (run.status !== 'completed') run = await client.runs.get(thread.id, run.id);
    const [answer] = await firstPage(client, thread.id);
    expect(answer).to.equal('get_weather returned: Rainy');
  });

  it('streams a text run with the Assistants event names', async () => {
    const agent = await client.createAgent('gpt-4o');
    const thread = await client.threads.create({ messages: [{ role: 'user', content: 'My name is Ada.' }] });
    const stream = await client.runs.create(thread.id, agent.id).stream();
    const events: string[] = [];
    let text = '';
    for await (const event of stream) {
      events.push(event.event);
      if (event.event === 'thread.message.delta') {
        const chunk = event.data as { delta: { content: { text?: { value?: string } }[] } };
        text += chunk.delta.content[0].text?.value ?? '';
      }
    }
    expect(text).to.equal('Nice to meet you, Ada!');
    expect(events[0]).to.equal('thread.run.created');
    expect(events.slice(-2)).to.deep.equal(['thread.run.completed', 'done']);
    expect(events).to.include.members(['thread.run.step.created', 'thread.message.created', 'thread.message.completed', 'thread.run.step.completed']);
  });

  it('creates a thread and run in one call', async () => {
    const agent = await client.createAgent('gpt-4o');
    let run = await client.runs.createThreadAndRun(agent.id, { thread: { messages: [{ role: 'user', content: 'My name is Bo.' }] } });
    while (run.status !== 'completed') run = await client.runs.get(run.threadId, run.id);
    expect(await firstPage(client, run.threadId)).to.deep.equal(['Nice to meet you, Bo!', 'My name is Bo.']);
  });

  it('keeps image blocks and attachments on messages, and refuses an image URL the service would not fetch', async () => {
    const thread = await client.threads.create();
    const message = await client.messages.create(thread.id, 'user', [
      { type: 'text', text: 'Look' },
      { type: 'image_url', imageUrl: { url: 'https://example.com/a.png' } },
      { type: 'image_file', imageFile: { fileId: 'assistant-img' } },
    ], { attachments: [{ fileId: 'assistant-doc', tools: [{ type: 'code_interpreter' }] }] });
    expect(message.content.map((c) => c.type)).to.deep.equal(['text', 'image_url', 'image_file']);
    expect(message.attachments?.map((a) => a.fileId)).to.deep.equal(['assistant-doc']);

    const response = await fetch(`${base()}/threads/${thread.id}/messages?api-version=v1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } }] }),
    });
    expect(response.status).to.equal(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).to.contain('http(s) URL or a base64 data URL');
  });

  it('a reply-phase latency fault lets the route do its work and holds the reply back', async () => {
    const agent = await client.createAgent('gpt-4o');
    const thread = await client.threads.create();
    running.emulator.injectFault({ kind: 'latency', phase: 'reply', ms: 60_000, method: 'POST', path: `/api/projects/emulated/threads/${thread.id}/runs` });
    const controller = new AbortController();
    // The SDK sends the request when its result is awaited.
    const pending = Promise.resolve(client.runs.create(thread.id, agent.id, { abortSignal: controller.signal }));
    let runs: unknown[] = [];
    while (runs.length === 0) {
      runs = [];
      for await (const run of client.runs.list(thread.id)) runs.push(run);
    }
    controller.abort();
    try {
      await pending;
      expect.fail('expected the held reply to be aborted');
    } catch (error) {
      expect((error as Error).name).to.equal('AbortError');
    }
  });
});

async function firstPage(client: AgentsClient, threadId: string): Promise<string[]> {
  const texts: string[] = [];
  for await (const m of client.messages.list(threadId)) {
    const part = m.content[0] as { text?: { value: string } };
    texts.push(part.text?.value ?? '');
  }
  return texts;
}
