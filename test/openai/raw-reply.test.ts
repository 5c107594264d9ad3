import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import OpenAI from 'openai';
import { lastValueFrom, toArray } from 'rxjs';
import { ChatAgent, ConnectionError, ServiceError, responseFromUpdates, responseText, type ChatResponseUpdate } from 'skein';
import { OpenAIChatClient, OpenAIResponsesClient } from 'skein/openai';
import { sseJsonEvents } from '../../plugins/openai/raw-reply.js';

/** A reply body, written in these pieces with a pause between them, so the client reads them apart. */
interface Scripted {
  pieces: string[];
  /** Keep the response open after the pieces (the client must end it). */
  hold?: boolean;
  /** `text/event-stream` unless set. */
  contentType?: string;
}

/** A loopback server answering every POST with the next scripted event stream. */
class ScriptedServer {
  readonly script: Scripted[] = [];
  closed = 0;
  #server: Server | undefined;
  baseURL = '';

  async start(): Promise<void> {
    this.#server = createServer((req, res) => void this.#answer(req, res));
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.baseURL = `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }

  async #answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for await (const _ of req);
    const next = this.script.shift();
    if (!next) {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"no scripted reply","type":"server_error"}}');
      return;
    }
    res.on('close', () => this.closed++);
    res.writeHead(200, { 'content-type': next.contentType ?? 'text/event-stream' });
    res.flushHeaders();
    for (const piece of next.pieces) {
      if (res.destroyed) return;
      res.write(piece);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    if (!next.hold) res.end();
  }
}

/** The text a list of updates folds to. */
const textOf = (updates: readonly ChatResponseUpdate[]) => responseText(responseFromUpdates(updates));

const chunk = (delta: object, extra: object = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: null }], usage: null, ...extra })}`;
const finish = `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], usage: null })}`;
const usage = `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })}`;

/** A whole chat stream, events joined by `eol` twice, cut into pieces of `size` characters. */
function chatStream(texts: string[], eol = '\n', size = 0): string[] {
  const events = [chunk({ role: 'assistant', content: '' }), ...texts.map((t) => chunk({ content: t })), finish, usage, 'data: [DONE]'];
  const body = events.map((e) => e + eol + eol).join('');
  if (!size) return [body];
  const pieces: string[] = [];
  for (let i = 0; i < body.length; i += size) pieces.push(body.slice(i, i + size));
  return pieces;
}

describe('OpenAI plugin: replies read from the raw response (raw-reply.ts)', () => {
  const server = new ScriptedServer();
  let sdk: OpenAI;
  before(async () => {
    await server.start();
    sdk = new OpenAI({ apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
  });
  after(() => server.stop());
  // A failed test must not leave its replies to the next one.
  beforeEach(() => (server.script.length = 0));

  /** What the SDK's own stream yields for `pieces`, and what Skein's reader yields for the same reply. */
  async function bothReaders(pieces: string[]): Promise<{ sdk: unknown[]; skein: unknown[] }> {
    server.script.push({ pieces }, { pieces });
    const params = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }], stream: true as const };
    const fromSdk: unknown[] = [];
    for await (const event of await sdk.chat.completions.create(params)) fromSdk.push(event);
    const fromSkein: unknown[] = [];
    for await (const event of sseJsonEvents(await sdk.chat.completions.create(params).asResponse())) fromSkein.push(event);
    return { sdk: fromSdk, skein: fromSkein };
  }

  it('yields exactly what the SDK stream yields, whole or in small pieces, with LF or CRLF line ends', async () => {
    for (const pieces of [chatStream(['Hello', ' world']), chatStream(['Hello', ' world'], '\r\n', 7), chatStream(['héllo 🌍', ' — fin'], '\n', 3)]) {
      const { sdk: expected, skein } = await bothReaders(pieces);
      expect(expected).to.have.length(5); // role, two texts, finish, usage
      expect(skein).to.deep.equal(expected);
    }
  });

  it('skips comments and ignores what follows [DONE], as the SDK does', async () => {
    const pieces = [': keep-alive\n\n', ...chatStream(['a']), chunk({ content: 'after done' }) + '\n\n'];
    const { sdk: expected, skein } = await bothReaders(pieces);
    expect(expected).to.have.length(4);
    expect(skein).to.deep.equal(expected);
  });

  describe('through OpenAIChatClient', () => {
    const client = () => new OpenAIChatClient({ apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0, model: 'm' });

    it('streams text, finish reason and usage from a reply that arrives a few bytes at a time', async () => {
      server.script.push({ pieces: chatStream(['The ', 'answer ', 'is 42.'], '\r\n', 9) });
      const updates = await lastValueFrom(client().getStreamingResponse([{ role: 'user', contents: [{ kind: 'text', text: 'q' }] }]).pipe(toArray()));
      expect(textOf(updates)).to.equal('The answer is 42.');
      expect(updates.some((u) => u.finishReason === 'stop')).to.equal(true);
      const usageUpdate = updates.flatMap((u) => u.contents).find((c) => c.kind === 'usage');
      expect(usageUpdate).to.deep.include({ kind: 'usage' });
      expect((usageUpdate as { usage: { totalTokens?: number } }).usage.totalTokens).to.equal(7);
    });

    it('an error event in the stream is a ServiceError with the service\'s message, after the updates before it; the thread is unchanged', async () => {
      const error = 'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error"}}\n\n';
      server.script.push({ pieces: [chunk({ role: 'assistant', content: 'Par' }) + '\n\n', error] });
      const seen: string[] = [];
      const failure = await new Promise<unknown>((resolve) =>
        client()
          .getStreamingResponse([{ role: 'user', contents: [{ kind: 'text', text: 'q' }] }])
          .subscribe({ next: (u) => seen.push(textOf([u])), error: resolve, complete: () => resolve(undefined) }),
      );
      expect(seen).to.deep.equal(['Par']);
      expect(failure).to.be.instanceOf(ServiceError);
      expect((failure as Error).message).to.contain('The server had an error while processing your request.');
      expect((failure as Error).cause).to.be.instanceOf(OpenAI.APIError);

      const agent = new ChatAgent({ chatClient: client(), name: 'a' });
      const thread = agent.getNewThread();
      server.script.push({ pieces: chatStream(['first turn']) }, { pieces: [chunk({ role: 'assistant', content: 'x' }) + '\n\n', error] });
      await lastValueFrom(agent.runStream('one', { thread }));
      const before = JSON.stringify(await thread.serialize());
      const streamed = agent.runStream('two', { thread }).pipe(toArray());
      const streamError = await lastValueFrom(streamed).then(() => undefined, (e: unknown) => e);
      expect(streamError).to.be.instanceOf(ServiceError);
      expect(JSON.stringify(await thread.serialize())).to.equal(before);
    });

    it('data that is not JSON is a ConnectionError that says so', async () => {
      server.script.push({ pieces: ['data: {"id": "chatcmpl-1", "choices": [\n\n'] });
      const failure = await lastValueFrom(client().getStreamingResponse([{ role: 'user', contents: [{ kind: 'text', text: 'q' }] }])).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failure).to.be.instanceOf(ConnectionError);
      expect((failure as Error).message).to.match(/not valid JSON/);
    });

    it('a stream that ends without [DONE] or finish_reason is a ConnectionError, never a short reply', async () => {
      server.script.push({ pieces: [chunk({ role: 'assistant', content: 'cut ' }) + '\n\n', chunk({ content: 'sho' }) + '\n'] });
      const failure = await lastValueFrom(client().getStreamingResponse([{ role: 'user', contents: [{ kind: 'text', text: 'q' }] }])).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failure).to.be.instanceOf(ConnectionError);
    });

    it('unsubscribing mid-stream closes the request; the next stream on the client works', async () => {
      const c = client();
      server.script.push({ pieces: [chunk({ role: 'assistant', content: 'slow' }) + '\n\n'], hold: true });
      const closedBefore = server.closed;
      await new Promise<void>((resolve) => {
        const subscription = c.getStreamingResponse([{ role: 'user', contents: [{ kind: 'text', text: 'q' }] }]).subscribe({
          next: () => {
            subscription.unsubscribe();
            resolve();
          },
        });
      });
      for (let i = 0; i < 100 && server.closed === closedBefore; i++) await new Promise((r) => setTimeout(r, 10));
      expect(server.closed).to.equal(closedBefore + 1);
      server.script.push({ pieces: chatStream(['again']) });
      const updates = await lastValueFrom(c.getStreamingResponse([{ role: 'user', contents: [{ kind: 'text', text: 'q' }] }]).pipe(toArray()));
      expect(textOf(updates)).to.equal('again');
    });

    it('a whole (non-streamed) reply is read from the raw response: text and usage; a 200 that is not JSON is a ConnectionError', async () => {
      const completion = { id: 'chatcmpl-2', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Whole reply.', refusal: null }, finish_reason: 'stop', logprobs: null }], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } };
      const body = JSON.stringify(completion);
      server.script.push({ pieces: [body.slice(0, 40), body.slice(40)], contentType: 'application/json' });
      const reply = await client().getResponse([{ role: 'user', contents: [{ kind: 'text', text: 'q' }] }]);
      expect(responseText(reply)).to.equal('Whole reply.');
      expect(reply.usage?.totalTokens).to.equal(5);

      server.script.push({ pieces: ['<html>Bad gateway page of a proxy</html>'], contentType: 'text/html' });
      const failure = await client().getResponse([{ role: 'user', contents: [{ kind: 'text', text: 'q' }] }]).then(() => undefined, (e: unknown) => e);
      expect(failure).to.be.instanceOf(ConnectionError);
      expect((failure as Error).message).to.match(/not valid JSON/);
    });

    it('a stand-in SDK client (a test double whose create resolves to chunks) still streams', async () => {
      const chunks = [
        { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'from ' }, finish_reason: null }] },
        { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'a double' }, finish_reason: 'stop' }] },
      ];
      const double = {
        chat: {
          completions: {
            create: () =>
              Promise.resolve(
                (async function* () {
                  yield* chunks;
                })(),
              ),
          },
        },
      } as unknown as OpenAI;
      const updates = await lastValueFrom(new OpenAIChatClient({ client: double, model: 'm' }).getStreamingResponse([{ role: 'user', contents: [{ kind: 'text', text: 'q' }] }]).pipe(toArray()));
      expect(textOf(updates)).to.equal('from a double');
    });

    it('a stand-in SDK client whose create resolves to a completion still answers getResponse', async () => {
      const completion = { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'double says hi', refusal: null }, finish_reason: 'stop', logprobs: null }] };
      const double = { chat: { completions: { create: () => Promise.resolve(completion) } } } as unknown as OpenAI;
      const reply = await new OpenAIChatClient({ client: double, model: 'm' }).getResponse([{ role: 'user', contents: [{ kind: 'text', text: 'q' }] }]);
      expect(responseText(reply)).to.equal('double says hi');
    });
  });

  it('OpenAIResponsesClient reads `event:` lines and CRLF bodies in pieces', async () => {
    const response = { id: 'resp_1', object: 'response', created_at: 1, status: 'in_progress', model: 'm', output: [], error: null, incomplete_details: null, instructions: null, metadata: {}, parallel_tool_calls: true, temperature: 1, top_p: 1, tool_choice: 'auto', tools: [], store: false, text: { format: { type: 'text' } }, truncation: 'disabled', usage: null };
    const item = { id: 'msg_1', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
    const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    const done = { ...item, status: 'completed', content: [{ ...part, text: 'Hi there' }] };
    const events: [string, object][] = [
      ['response.created', { response }],
      ['response.output_item.added', { output_index: 0, item }],
      ['response.content_part.added', { item_id: 'msg_1', output_index: 0, content_index: 0, part }],
      ['response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi ', logprobs: [] }],
      ['response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'there', logprobs: [] }],
      ['response.output_text.done', { item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Hi there', logprobs: [] }],
      ['response.content_part.done', { item_id: 'msg_1', output_index: 0, content_index: 0, part: { ...part, text: 'Hi there' } }],
      ['response.output_item.done', { output_index: 0, item: done }],
      ['response.completed', { response: { ...response, status: 'completed', output: [done], usage: { input_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 4 } } }],
    ];
    const body = events.map(([type, data], i) => `event: ${type}\r\ndata: ${JSON.stringify({ type, sequence_number: i, ...data })}\r\n\r\n`).join('');
    const pieces: string[] = [];
    for (let i = 0; i < body.length; i += 29) pieces.push(body.slice(i, i + 29));
    server.script.push({ pieces });
    const client = new OpenAIResponsesClient({ apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0, model: 'm', store: false });
    const updates = await lastValueFrom(client.getStreamingResponse([{ role: 'user', contents: [{ kind: 'text', text: 'q' }] }]).pipe(toArray()));
    expect(textOf(updates)).to.equal('Hi there');
  });
});
