import { expect } from 'chai';
import type OpenAI from 'openai';
import { Emulator } from 'skein/testing';
import { rawClient } from './fixture.js';

const tools: OpenAI.Responses.FunctionTool[] = [
  { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
];

describe('Emulator: Responses and Conversations through the openai SDK', () => {
  let emulator: Emulator;
  let openai: OpenAI;

  beforeEach(async () => {
    emulator = await Emulator.start();
    openai = rawClient(emulator);
  });

  afterEach(async () => {
    await emulator.stop();
  });

  it('answers in the Response shape; the SDK derives output_text', async () => {
    const response = await openai.responses.create({ model: 'm', input: 'Hello', instructions: 'Be kind.' });
    expect(response).to.include({ id: 'resp_1', object: 'response', status: 'completed', model: 'm', instructions: 'Be kind.', previous_response_id: null });
    expect(response.output_text).to.equal('You said: "Hello" (I have seen 1 earlier messages.)');
    expect(response.output[0]).to.deep.include({ type: 'message', role: 'assistant', status: 'completed' });
    expect(response.usage!.total_tokens).to.equal(response.usage!.input_tokens + response.usage!.output_tokens);
  });

  it('carries history only through stored responses, without instructions', async () => {
    const first = await openai.responses.create({ model: 'm', input: 'My name is Ada.', instructions: 'Be kind.' });
    const second = await openai.responses.create({ model: 'm', input: "What's my name?", previous_response_id: first.id });
    expect(second.output_text).to.equal('Your name is Ada.');
    const third = await openai.responses.create({ model: 'm', input: 'What are your instructions?', previous_response_id: second.id });
    expect(third.output_text).to.equal('I have no instructions.');
    const fresh = await openai.responses.create({ model: 'm', input: "What's my name?" });
    expect(fresh.output_text).to.equal("I don't know your name yet.");
  });

  it('does not keep responses created with store: false', async () => {
    const unstored = await openai.responses.create({ model: 'm', input: 'My name is Ada.', store: false });
    const error = await openai.responses.create({ model: 'm', input: 'hi', previous_response_id: unstored.id }).catch((e: unknown) => e);
    expect(error).to.have.property('status', 400);
    expect(error).to.have.property('code', 'previous_response_not_found');
    expect(await openai.responses.retrieve(unstored.id).catch((e: unknown) => e)).to.have.property('status', 404);
  });

  it('gets, lists input items of, and deletes a stored response', async () => {
    const response = await openai.responses.create({ model: 'm', input: [{ role: 'user', content: 'one' }, { role: 'user', content: 'two' }] });
    expect((await openai.responses.retrieve(response.id)).output_text).to.equal(response.output_text);
    const items = [];
    for await (const item of openai.responses.inputItems.list(response.id, { order: 'asc', limit: 1 })) items.push(item);
    expect(items.map((i) => (i as { content: { text: string }[] }).content[0]!.text)).to.deep.equal(['one', 'two']);
    await openai.responses.delete(response.id);
    expect(await openai.responses.retrieve(response.id).catch((e: unknown) => e)).to.have.property('status', 404);
  });

  it('streams the Responses event protocol the SDK stream helper accepts', async () => {
    const stream = openai.responses.stream({ model: 'm', input: 'call get_weather {"city":"Paris"}', tools });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const final = await stream.finalResponse();
    expect(final.output[0]).to.deep.include({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', call_id: 'call_1' });
    expect(types[0]).to.equal('response.created');
    expect(types).to.include.members(['response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done']);
    expect(types.at(-1)).to.equal('response.completed');

    const text = openai.responses.stream({
      model: 'm',
      input: [{ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }],
      previous_response_id: final.id,
    });
    expect((await text.finalResponse()).output_text).to.equal('get_weather returned: sunny');
  });

  it('rejects a continuation whose function calls get no output, like the real service', async () => {
    const call = await openai.responses.create({ model: 'm', input: 'call get_weather {"city":"Paris"}', tools });
    const error = await openai.responses.create({ model: 'm', input: 'never mind', previous_response_id: call.id }).catch((e: unknown) => e);
    expect(error).to.have.property('status', 400);
    expect((error as Error).message).to.contain('No tool output found for function call call_1.');
  });

  it('rejects previous_response_id together with conversation', async () => {
    const conversation = await openai.conversations.create({});
    const first = await openai.responses.create({ model: 'm', input: 'hi' });
    const error = await openai.responses
      .create({ model: 'm', input: 'hi', previous_response_id: first.id, conversation: conversation.id })
      .catch((e: unknown) => e);
    expect(error).to.have.property('status', 400);
  });

  it('keeps a conversation: initial items, appended turns, paging, metadata, deletion', async () => {
    const conversation = await openai.conversations.create({ items: [{ type: 'message', role: 'user', content: 'My name is Lin.' }], metadata: { topic: 'x' } });
    expect(conversation).to.include({ object: 'conversation' });
    expect(conversation.id).to.match(/^conv_/);
    const reply = await openai.responses.create({ model: 'm', input: "What's my name?", conversation: conversation.id });
    expect(reply.output_text).to.equal('Your name is Lin.');
    expect(reply.conversation).to.deep.equal({ id: conversation.id });

    await openai.conversations.items.create(conversation.id, { items: [{ type: 'message', role: 'user', content: 'note' }] });
    const texts: string[] = [];
    for await (const item of openai.conversations.items.list(conversation.id, { order: 'asc', limit: 2 })) {
      texts.push((item as { content: { text: string }[] }).content[0]!.text);
    }
    expect(texts).to.deep.equal(['My name is Lin.', "What's my name?", 'Your name is Lin.', 'note']);
    const newestFirst = await openai.conversations.items.list(conversation.id);
    expect((newestFirst.data[0] as { content: { text: string }[] }).content[0]!.text).to.equal('note');

    expect((await openai.conversations.update(conversation.id, { metadata: { topic: 'y' } })).metadata).to.deep.equal({ topic: 'y' });
    expect(await openai.conversations.delete(conversation.id)).to.deep.equal({ id: conversation.id, object: 'conversation.deleted', deleted: true });
    const gone = await openai.responses.create({ model: 'm', input: 'hi', conversation: conversation.id }).catch((e: unknown) => e);
    expect(gone).to.have.property('status', 404);
  });
});

describe('Emulator: GET /v1/responses/{id}/input_items as the service lists it', () => {
  let emulator: Emulator;
  let openai: OpenAI;
  afterEach(async () => {
    await emulator.stop();
  });
  const start = async (options: Parameters<typeof Emulator.start>[0] = {}) => {
    emulator = await Emulator.start(options);
    openai = rawClient(emulator);
  };
  const text = (item: unknown) => (item as { content: { text: string }[] }).content[0]!.text;
  /** Three turns of a previous_response_id chain, the second answering a function call. */
  const chain = async () => {
    const first = await openai.responses.create({ model: 'm', input: 'call get_weather {"city":"Oslo"}', tools });
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const second = await openai.responses.create({
      model: 'm',
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
      previous_response_id: first.id,
      tools,
    });
    const third = await openai.responses.create({ model: 'm', input: 'thanks', previous_response_id: second.id });
    return { first, second, third };
  };

  it('lists the whole context of a continuing response: earlier inputs and outputs with their ids, then the new input (oldest first with order=asc)', async () => {
    await start();
    const { first, second, third } = await chain();
    const listed = (await openai.responses.inputItems.list(third.id, { order: 'asc', limit: 100 })).data;
    const firstInput = (await openai.responses.inputItems.list(first.id, { order: 'asc' })).data;
    expect(listed.map((i) => i.type)).to.deep.equal(['message', 'function_call', 'function_call_output', 'message', 'message']);
    expect(listed.map((i) => i.id)).to.deep.equal([firstInput[0]!.id, first.output[0]!.id, listed[2]!.id, second.output[0]!.id, listed[4]!.id]);
    expect(text(listed[4])).to.equal('thanks');
  });

  it('pages like the API reference says: desc by default, limit 1..100 (default 20), after/before cursors, first_id/last_id, has_more', async () => {
    await start();
    const input = Array.from({ length: 25 }, (_, i) => ({ role: 'user' as const, content: `m${i}` }));
    const response = await openai.responses.create({ model: 'm', input });
    const list = (query: Record<string, string>) =>
      fetch(`${emulator.openaiBaseURL}/responses/${response.id}/input_items?${new URLSearchParams(query)}`).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> & { data: unknown[] } }));
    const byDefault = await list({});
    expect(byDefault.body.data.map(text)).to.deep.equal(input.slice(5).map((m) => m.content).reverse());
    expect(byDefault.body).to.include({ object: 'list', has_more: true });
    expect(byDefault.body.first_id).to.equal((byDefault.body.data[0] as { id: string }).id);
    expect(byDefault.body.last_id).to.equal((byDefault.body.data[19] as { id: string }).id);
    const asc = await list({ order: 'asc', limit: '10' });
    const next = await list({ order: 'asc', limit: '10', after: asc.body.last_id as string });
    expect(next.body.data.map(text)).to.deep.equal(input.slice(10, 20).map((m) => m.content));
    const last = await list({ order: 'asc', limit: '10', after: next.body.last_id as string });
    expect(last.body.data.map(text)).to.deep.equal(input.slice(20).map((m) => m.content));
    expect(last.body.has_more).to.equal(false);
    const back = await list({ order: 'asc', limit: '10', before: next.body.first_id as string });
    expect(back.body.data.map(text)).to.deep.equal(input.slice(0, 10).map((m) => m.content));
    const nearest = await list({ order: 'asc', limit: '3', before: next.body.first_id as string });
    expect(nearest.body.data.map(text)).to.deep.equal(['m7', 'm8', 'm9']);
    expect(nearest.body.has_more).to.equal(true);
    const bads: Record<string, string>[] = [{ limit: '0' }, { limit: '101' }, { limit: 'ten' }, { order: 'newest' }, { after: 'msg_nope' }];
    for (const bad of bads) {
      const refused = await list(bad);
      expect(refused.status, JSON.stringify(bad)).to.equal(400);
      expect(JSON.stringify(refused.body), JSON.stringify(bad)).to.match(/Invalid 'limit'|Invalid 'order'|No item with id 'msg_nope'/);
    }
  });

  it('lists a conversation response\'s context: the conversation\'s items before the input', async () => {
    await start();
    const conversation = await openai.conversations.create({ items: [{ role: 'user', content: 'My name is Ada.' }] });
    const first = await openai.responses.create({ model: 'm', input: 'hello', conversation: conversation.id });
    const second = await openai.responses.create({ model: 'm', input: "What's my name?", conversation: conversation.id });
    const listed = (await openai.responses.inputItems.list(second.id, { order: 'asc' })).data;
    expect(listed.map(text)).to.deep.equal(['My name is Ada.', 'hello', first.output_text, "What's my name?"]);
  });

  it('with responsesInputItems: "request-input", lists only each request\'s own input (as some compatible servers do)', async () => {
    await start({ responsesInputItems: 'request-input' });
    const { third } = await chain();
    const listed = (await openai.responses.inputItems.list(third.id, { order: 'asc' })).data;
    expect(listed.map(text)).to.deep.equal(['thanks']);
  });
});
