import { expect } from 'chai';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { emulatorPerTest } from '../support/emulator.js';

const tools: ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
  {
    type: 'function',
    function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } },
  },
];

describe('Emulator: Chat Completions through the openai SDK', () => {
  let client: OpenAI;

  const running = emulatorPerTest();
  beforeEach(() => {
    client = new OpenAI({ apiKey: 'test', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 });
  });

  it('serves on a loopback base URL', () => {
    expect(running.emulator.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(running.emulator.openaiBaseURL).to.equal(`${running.emulator.url}/v1`);
  });

  it('answers a non-streaming request in the Chat Completions shape', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    expect(completion.id).to.equal('chatcmpl-1');
    expect(completion.object).to.equal('chat.completion');
    expect(completion.model).to.equal('gpt-test');
    expect(completion.choices[0].finish_reason).to.equal('stop');
    expect(completion.choices[0].message).to.deep.equal({
      role: 'assistant',
      content: 'You said: "Hello there" (I have seen 0 earlier messages.)',
      refusal: null,
    });
    expect(completion.usage).to.deep.include({ prompt_tokens: 2, completion_tokens: 10, total_tokens: 12 });
  });

  it('records the request the SDK sent', async () => {
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    const [recorded] = running.emulator.requestsTo('/v1/chat/completions');
    expect(recorded.method).to.equal('POST');
    expect(recorded.headers.authorization).to.equal('Bearer test');
    expect(recorded.body).to.deep.equal({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('reads content-part arrays and developer messages', async () => {
    const completion = await client.chat.completions.create({
      model: 'm',
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: [{ type: 'text', text: 'What are your ' }, { type: 'text', text: 'instructions?' }] },
      ],
    });
    expect(completion.choices[0].message.content).to.equal('Answer in French.');
  });

  it('remembers across turns only because the history is sent', async () => {
    const history: ChatCompletionMessageParam[] = [];
    const say = async (content: string) => {
      history.push({ role: 'user', content });
      const completion = await client.chat.completions.create({ model: 'm', messages: history });
      const message = completion.choices[0].message;
      history.push({ role: 'assistant', content: message.content });
      return message.content;
    };
    expect(await say('My name is Ada.')).to.equal('Nice to meet you, Ada!');
    expect(await say('What is my name?')).to.equal('Your name is Ada.');
    expect(await say('What did we talk about?')).to.equal('We talked about: "My name is Ada."; "What is my name?"');

    const forgetful = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'What is my name?' }],
    });
    expect(forgetful.choices[0].message.content).to.equal("I don't know your name yet.");
  });

  describe('streaming', () => {
    it('streams word deltas the SDK reassembles into the full reply', async () => {
      const stream = client.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'my name is Ada' }] });
      const deltas: string[] = [];
      stream.on('content', (delta) => deltas.push(delta));
      const completion = await stream.finalChatCompletion();
      expect(deltas).to.deep.equal(['Nice ', 'to ', 'meet ', 'you, ', 'Ada!']);
      expect(completion.choices[0].message.content).to.equal('Nice to meet you, Ada!');
      expect(completion.choices[0].finish_reason).to.equal('stop');
    });

    it('follows the chunk protocol with create({stream: true})', async () => {
      const stream = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'my name is Bo' }],
        stream: true,
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks[0].choices[0].delta).to.deep.equal({ role: 'assistant', content: '' });
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === 'chatcmpl-1')).to.equal(true);
      const last = chunks[chunks.length - 1];
      expect(last.choices[0]).to.deep.include({ delta: {}, finish_reason: 'stop' });
      expect(chunks.some((chunk) => 'usage' in chunk)).to.equal(false);
    });

    it('adds a usage chunk before [DONE] when include_usage is set', async () => {
      const stream = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'my name is Bo' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      const last = chunks[chunks.length - 1];
      expect(last.choices).to.deep.equal([]);
      expect(last.usage).to.deep.include({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 });
      expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).to.equal(true);
    });
  });

  describe('tool calls', () => {
    it('calls a tool by natural use', async () => {
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
        tools,
      });
      const choice = completion.choices[0];
      expect(choice.finish_reason).to.equal('tool_calls');
      expect(choice.message.content).to.equal(null);
      expect(choice.message.tool_calls).to.deep.equal([
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ]);
    });

    it('offers no tools when tool_choice is none', async () => {
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
        tools,
        tool_choice: 'none',
      });
      expect(completion.choices[0].message.tool_calls).to.equal(undefined);
      expect(completion.choices[0].finish_reason).to.equal('stop');
    });

    it('streams parallel tool calls the SDK reassembles, invalid arguments kept raw', async () => {
      const stream = client.chat.completions.stream({
        model: 'm',
        messages: [{ role: 'user', content: 'call get_weather {"city":"Oslo","note":"long enough"} and call get_time {zone: CET' }],
        tools,
      });
      const completion = await stream.finalChatCompletion();
      expect(completion.choices[0].finish_reason).to.equal('tool_calls');
      expect(completion.choices[0].message.tool_calls).to.deep.equal([
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Oslo","note":"long enough"}' },
        },
        { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{zone: CET' } },
      ]);
    });

    it('splits streamed arguments into several fragments', async () => {
      const stream = await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'call get_weather {"city":"Reykjavik"}' }],
        tools,
        stream: true,
      });
      const fragments: string[] = [];
      for await (const chunk of stream) {
        const call = chunk.choices[0]?.delta.tool_calls?.[0];
        if (call?.function?.arguments) fragments.push(call.function.arguments);
      }
      expect(fragments.length).to.be.greaterThan(1);
      expect(fragments.join('')).to.equal('{"city":"Reykjavik"}');
    });

    it('answers tool results sent back in the history', async () => {
      const completion = await client.chat.completions.create({
        model: 'm',
        tools,
        messages: [
          { role: 'user', content: 'What is the weather in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_7', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          { role: 'tool', tool_call_id: 'call_7', content: '{"temp":21}' },
        ],
      });
      expect(completion.choices[0].message.content).to.equal('get_weather returned: {"temp":21}');
    });
  });

  describe('bad requests', () => {
    it('rejects a request without messages with a 400 naming the field', async () => {
      const error = await client.chat.completions
        .create({ model: 'm', messages: [] })
        .then(() => undefined, (caught: unknown) => caught);
      expect(error).to.be.instanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('messages');
    });

    it('rejects an unknown role', async () => {
      const response = await fetch(`${running.emulator.openaiBaseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'wizard', content: 'x' }] }),
      });
      expect(response.status).to.equal(400);
      const body = (await response.json()) as { error: { param: string } };
      expect(body.error.param).to.equal('messages[0].role');
    });
  });
});
