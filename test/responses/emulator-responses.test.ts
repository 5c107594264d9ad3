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
