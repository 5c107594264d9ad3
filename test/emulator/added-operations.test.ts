import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { rejection, emulatorPerTest } from './sdk-fixture.js';

const weather = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } as const;

describe('Emulator: the operations a user calls besides create, through the openai SDK', () => {
  const fixture = emulatorPerTest();
  let emulator: typeof fixture.emulator;
  let client: OpenAI;
  beforeEach(() => ({ emulator, client } = fixture));

  describe('x-request-id', () => {
    it('is on results and on errors, and names the recorded request', async () => {
      const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      expect(completion._request_id).to.equal(emulator.requests[0].requestId).and.match(/^req_\d+$/);
      const error = await rejection(client.responses.retrieve('resp_missing'));
      expect(error).to.be.instanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.APIError>).requestID).to.equal(emulator.requests[1].requestId);
    });

    it('is on Foundry replies, unknown routes and injected faults too', async () => {
      const foundry = await fetch(`${emulator.url}/api/projects/p/assistants?api-version=v1`, { headers: { authorization: 'Bearer x' } });
      emulator.injectFault({ kind: 'status', status: 503 });
      const fault = await fetch(`${emulator.openaiBaseURL}/chat/completions`, { method: 'POST', body: '{}' });
      const unknown = await fetch(`${emulator.url}/nowhere`);
      expect([foundry, fault, unknown].map((r) => [r.status, r.headers.get('x-request-id')])).to.deep.equal([
        [200, 'req_1'],
        [503, 'req_2'],
        [404, 'req_3'],
      ]);
    });
  });

  describe('stored chat completions', () => {
    it('lists, filters by metadata, retrieves, updates, lists the messages of and deletes a stored completion', async () => {
      const stored = await client.chat.completions.create({ model: 'gpt-a', store: true, metadata: { topic: 'names' }, messages: [{ role: 'user', content: 'My name is Ada.' }] });
      await client.chat.completions.create({ model: 'gpt-b', store: true, messages: [{ role: 'user', content: 'Hello' }] });
      await client.chat.completions.create({ model: 'gpt-a', messages: [{ role: 'user', content: 'not stored' }] });

      const all = await client.chat.completions.list();
      expect(all.data.map((c) => c.model)).to.deep.equal(['gpt-a', 'gpt-b']);
      const named = await client.chat.completions.list({ metadata: { topic: 'names' } });
      expect(named.data.map((c) => c.id)).to.deep.equal([stored.id]);
      expect((await client.chat.completions.retrieve(stored.id)).choices[0].message.content).to.equal('Nice to meet you, Ada!');

      const updated = await client.chat.completions.update(stored.id, { metadata: { topic: 'greetings' } });
      expect(updated).to.have.deep.property('metadata', { topic: 'greetings' });
      const messages = await client.chat.completions.messages.list(stored.id);
      expect(messages.data.map((m) => [m.id, m.role, m.content])).to.deep.equal([[`${stored.id}-0`, 'user', 'My name is Ada.']]);

      expect(await client.chat.completions.delete(stored.id)).to.deep.equal({ object: 'chat.completion.deleted', id: stored.id, deleted: true });
      expect(await rejection(client.chat.completions.retrieve(stored.id))).to.be.instanceOf(OpenAI.NotFoundError);
    });

    it('keeps nothing without store: true and refuses metadata that is not strings', async () => {
      const plain = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      expect(await rejection(client.chat.completions.retrieve(plain.id))).to.be.instanceOf(OpenAI.NotFoundError);
      const bad = await rejection(client.chat.completions.create({ model: 'm', store: true, metadata: { n: 1 as unknown as string }, messages: [{ role: 'user', content: 'hi' }] }));
      expect(bad).to.be.instanceOf(OpenAI.BadRequestError).and.have.nested.property('error.param', 'metadata');
      expect((await client.chat.completions.list()).data).to.deep.equal([]);
    });

    it('reports usage details, service tier and fingerprint on every completion', async () => {
      const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      expect(completion.service_tier).to.equal('default');
      expect(completion.system_fingerprint).to.equal('fp_emulator');
      expect(completion.usage?.prompt_tokens_details?.cached_tokens).to.equal(0);
      expect(completion.usage?.completion_tokens_details?.reasoning_tokens).to.equal(0);
    });
  });

  describe('Responses', () => {
    it('resolves item_reference inputs from stored responses, so a client-kept history keeps its memory', async () => {
      const first = await client.responses.create({ model: 'm', input: 'My name is Ada.' });
      const second = await client.responses.create({
        model: 'm',
        input: [{ role: 'user', content: 'My name is Ada.' }, { type: 'item_reference', id: first.output[0].id! }, { role: 'user', content: "What's my name?" }],
      });
      expect(second.output_text).to.equal('Your name is Ada.');
      const items = await client.responses.inputItems.list(second.id, { order: 'asc' });
      expect(items.data[1]).to.deep.include({ id: first.output[0].id, type: 'message', role: 'assistant' });
    });

    it('answers an unknown item_reference with a 404 naming the item, and stores nothing', async () => {
      const error = await rejection(client.responses.create({ model: 'm', input: [{ type: 'item_reference', id: 'msg_nope' }] }));
      expect(error).to.be.instanceOf(OpenAI.NotFoundError);
      expect((error as Error).message).to.contain("Item with id 'msg_nope' not found");
      expect((error as InstanceType<typeof OpenAI.APIError>).error).to.deep.include({ param: 'input[0]', code: 'not_found' });
      const created = await client.responses.create({ model: 'm', input: 'hi' });
      expect(created.id).to.equal('resp_1');
    });

    it('counts input tokens as a create with the same body would, and reports cache_write_tokens', async () => {
      const first = await client.responses.create({ model: 'm', instructions: 'Be brief.', input: 'My name is Ada.' });
      const body = { model: 'm', instructions: 'Be brief.', previous_response_id: first.id, input: "What's my name?" };
      const counted = await client.responses.inputTokens.count(body);
      const created = await client.responses.create(body);
      expect(counted).to.deep.include({ object: 'response.input_tokens', input_tokens: created.usage!.input_tokens });
      expect(created.usage!.input_tokens_details).to.deep.equal({ cached_tokens: 0, cache_write_tokens: 0 });
      expect(created).to.deep.include({ service_tier: 'default', reasoning: { effort: null, summary: null } });
      expect(created.completed_at).to.equal(created.created_at);
    });
  });

  describe('Assistants v2', () => {
    it('creates a thread and run in one call, and modifies thread, message and run', async () => {
      const assistant = await client.beta.assistants.create({ model: 'm', instructions: 'Be brief.' });
      const run = await client.beta.threads.createAndRunPoll({ assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: 'My name is Ada.' }] } }, { pollIntervalMs: 1 });
      expect(run.status).to.equal('completed');
      const messages = await client.beta.threads.messages.list(run.thread_id, { order: 'asc' });
      expect(messages.data.map((m) => (m.content[0] as { text: { value: string } }).text.value)).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!']);

      expect((await client.beta.threads.update(run.thread_id, { metadata: { user: 'ada' } })).metadata).to.deep.equal({ user: 'ada' });
      const first = messages.data[0];
      expect((await client.beta.threads.messages.update(first.id, { thread_id: run.thread_id, metadata: { seen: 'yes' } })).metadata).to.deep.equal({ seen: 'yes' });
      expect((await client.beta.threads.runs.update(run.id, { thread_id: run.thread_id, metadata: { checked: 'yes' } })).metadata).to.deep.equal({ checked: 'yes' });
      expect(await client.beta.threads.messages.delete(first.id, { thread_id: run.thread_id })).to.deep.equal({ id: first.id, object: 'thread.message.deleted', deleted: true });
      expect((await client.beta.threads.messages.list(run.thread_id)).data).to.have.length(1);
    });

    it('streams a thread-and-run starting with thread.created, and retrieves one run step', async () => {
      const assistant = await client.beta.assistants.create({ model: 'm', tools: [{ type: 'function', function: { name: 'get_weather', parameters: weather } }] });
      const stream = await client.beta.threads.createAndRun({ assistant_id: assistant.id, stream: true, thread: { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] } });
      const events: OpenAI.Beta.AssistantStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      expect(events[0].event).to.equal('thread.created');
      const last = events.at(-1)!;
      expect(last.event).to.equal('thread.run.requires_action');
      const run = last.data as OpenAI.Beta.Threads.Run;
      const steps = await client.beta.threads.runs.steps.list(run.id, { thread_id: run.thread_id });
      const step = await client.beta.threads.runs.steps.retrieve(steps.data[0].id, { thread_id: run.thread_id, run_id: run.id });
      expect(step).to.deep.include({ id: steps.data[0].id, type: 'tool_calls', status: 'in_progress' });
      expect(await rejection(client.beta.threads.createAndRun({ assistant_id: 'asst_nope', thread: {} }))).to.be.instanceOf(OpenAI.NotFoundError);
    });
  });

  describe('vector stores', () => {
    it('searches a store (best sentence first, attribute filters) and serves a file\'s parsed content', async () => {
      const policy = await client.files.create({ file: await toFile(Buffer.from('Refunds are accepted within 30 days. Shipping takes five days.'), 'policy.txt'), purpose: 'assistants' });
      const faq = await client.files.create({ file: await toFile(Buffer.from('Refunds go to the original card.'), 'faq.md'), purpose: 'assistants' });
      const store = await client.vectorStores.create({ name: 'shop' });
      await client.vectorStores.files.createAndPoll(store.id, { file_id: policy.id, attributes: { kind: 'policy' } }, { pollIntervalMs: 1 });
      await client.vectorStores.files.createAndPoll(store.id, { file_id: faq.id }, { pollIntervalMs: 1 });

      const hits = await client.vectorStores.search(store.id, { query: 'How many days until refunds are accepted?' });
      expect(hits.data.map((h) => h.content[0].text)).to.deep.equal(['Refunds are accepted within 30 days.', 'Shipping takes five days.', 'Refunds go to the original card.']);
      await client.vectorStores.files.update(faq.id, { vector_store_id: store.id, attributes: { kind: 'faq' } });
      const faqOnly = await client.vectorStores.search(store.id, { query: 'refunds', filters: { type: 'eq', key: 'kind', value: 'faq' } });
      expect(faqOnly.data.map((h) => [h.filename, h.attributes])).to.deep.equal([['faq.md', { kind: 'faq' }]]);

      const content = await client.vectorStores.files.content(policy.id, { vector_store_id: store.id });
      expect(content.data.map((c) => c.text)).to.deep.equal(['Refunds are accepted within 30 days. Shipping takes five days.']);
      const bad = await rejection(client.vectorStores.search(store.id, { query: 'refunds', filters: { type: 'like', key: 'kind', value: 'x' } as never }));
      expect(bad).to.be.instanceOf(OpenAI.BadRequestError).and.have.nested.property('error.param', 'filters');
    });
  });
});
