import { expect } from 'chai';
import OpenAI from 'openai';
import { Emulator } from '../../src/testing/emulator/index.js';
import { emulatorPerTest as freshEmulatorPerTest } from '../support/emulator.js';
import { emulatorPerTest, rejection } from './sdk-fixture.js';

const CHAT_PATH = '/v1/chat/completions';
const hello = { model: 'm', messages: [{ role: 'user' as const, content: 'Hello' }] };
const longReply = { model: 'm', messages: [{ role: 'user' as const, content: 'one two three four five six seven' }] };

async function drain(stream: AsyncIterable<unknown>): Promise<number> {
  let count = 0;
  for await (const _chunk of stream) count++;
  return count;
}

describe('Emulator: faults, aborts, auth and routing', () => {
  const fx = emulatorPerTest();

  describe('status faults', () => {
    it('fails the next request with the status and the error envelope', async () => {
      fx.emulator.injectFault({ kind: 'status', status: 500, message: 'boom' });
      const error = await rejection(fx.client.chat.completions.create(hello));
      expect(error).to.be.instanceOf(OpenAI.InternalServerError);
      const apiError = error as InstanceType<typeof OpenAI.APIError>;
      expect(apiError.status).to.equal(500);
      expect(apiError.error).to.deep.equal({ message: 'boom', type: 'server_error', param: null, code: null });
      await fx.client.chat.completions.create(hello);
    });

    it('applies a fault as many times as asked, then stops', async () => {
      fx.emulator.injectFault({ kind: 'status', status: 503, times: 2 });
      expect(await rejection(fx.client.chat.completions.create(hello))).to.have.property('status', 503);
      expect(await rejection(fx.client.chat.completions.create(hello))).to.have.property('status', 503);
      const completion = await fx.client.chat.completions.create(hello);
      expect(completion.choices[0].message.content).to.contain('Hello');
    });

    it('leaves requests to other paths alone', async () => {
      fx.emulator.injectFault({ kind: 'status', status: 500, path: '/v1/responses' });
      await fx.client.chat.completions.create(hello);
      fx.emulator.clearFaults();
      // The route itself answers (a 400 for the empty body), not the cleared 500 fault.
      const response = await fetch(`${fx.emulator.openaiBaseURL}/responses`, { method: 'POST', body: '{}' });
      expect(response.status).to.equal(400);
    });

    it('sends retry-after on a 429 when given', async () => {
      fx.emulator.injectFault({ kind: 'status', status: 429, retryAfterSeconds: 7 });
      const response = await fetch(`${fx.emulator.openaiBaseURL}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify(hello),
      });
      expect(response.status).to.equal(429);
      expect(response.headers.get('retry-after')).to.equal('7');
      expect(await response.json()).to.deep.equal({
        error: { message: 'Injected fault: HTTP 429.', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
      });
    });

    it('lets a retrying SDK succeed after a 429', async () => {
      const retrying = new OpenAI({ apiKey: 'test', baseURL: fx.emulator.openaiBaseURL, maxRetries: 2 });
      fx.emulator.injectFault({ kind: 'status', status: 429, retryAfterSeconds: 0 });
      const completion = await retrying.chat.completions.create(hello);
      expect(completion.choices[0].message.content).to.contain('Hello');
      expect(fx.emulator.requestsTo(CHAT_PATH)).to.have.length(2);
    });

    it('clears pending faults', async () => {
      fx.emulator.injectFault({ kind: 'status', status: 500, times: 3 });
      fx.emulator.clearFaults();
      await fx.client.chat.completions.create(hello);
    });
  });

  describe('latency', () => {
    it('delays a reply past the client timeout', async () => {
      fx.emulator.injectFault({ kind: 'latency', ms: 10_000 });
      const impatient = new OpenAI({ apiKey: 'test', baseURL: fx.emulator.openaiBaseURL, maxRetries: 0, timeout: 1_000 });
      const error = await rejection(impatient.chat.completions.create(hello));
      expect(error).to.be.instanceOf(OpenAI.APIConnectionTimeoutError);
      await impatient.chat.completions.create(hello);
    });

    it('delays every reply when latencyMs is set', async () => {
      const slow = await Emulator.start({ latencyMs: 10_000 });
      try {
        const impatient = new OpenAI({ apiKey: 'test', baseURL: slow.openaiBaseURL, maxRetries: 0, timeout: 1_000 });
        expect(await rejection(impatient.chat.completions.create(hello))).to.be.instanceOf(
          OpenAI.APIConnectionTimeoutError,
        );
      } finally {
        await slow.stop();
      }
    });
  });

  describe('broken bodies and streams', () => {
    it('cut-stream makes the SDK iteration throw without [DONE]', async () => {
      fx.emulator.injectFault({ kind: 'cut-stream', afterEvents: 2 });
      const stream = await fx.client.chat.completions.create({ ...longReply, stream: true });
      const seen: unknown[] = [];
      const error = await rejection(
        (async () => {
          for await (const chunk of stream) seen.push(chunk);
        })(),
      );
      expect(error).to.be.instanceOf(Error);
      expect(seen).to.have.length(2);
      expect(fx.emulator.abortedStreams).to.equal(0);
    });

    it('cut-stream also breaks the stream helper', async () => {
      fx.emulator.injectFault({ kind: 'cut-stream', afterEvents: 3 });
      const stream = fx.client.chat.completions.stream(longReply);
      expect(await rejection(stream.finalChatCompletion())).to.be.instanceOf(Error);
    });

    it('garbage-json makes a non-streaming call throw', async () => {
      fx.emulator.injectFault({ kind: 'garbage-json' });
      const error = await rejection(fx.client.chat.completions.create(hello));
      expect(error).to.be.instanceOf(SyntaxError);
    });

    it('malformed-sse makes the SDK iteration throw', async () => {
      fx.emulator.injectFault({ kind: 'malformed-sse' });
      const stream = await fx.client.chat.completions.create({ ...hello, stream: true });
      expect(await rejection(drain(stream))).to.be.instanceOf(SyntaxError);
      const healthy = await fx.client.chat.completions.create({ ...hello, stream: true });
      expect(await drain(healthy)).to.be.greaterThan(2);
    });
  });

  describe('client aborts', () => {
    it('counts a stream the client abandoned', async () => {
      fx.emulator.injectFault({ kind: 'stall-stream', afterEvents: 2 });
      const stream = await fx.client.chat.completions.create({ ...longReply, stream: true });
      for await (const _chunk of stream) break; // breaking aborts the request
      await fx.emulator.waitForAbortedStream();
      expect(fx.emulator.abortedStreams).to.equal(1);
    });

    it('does not count streams that finished', async () => {
      const stream = await fx.client.chat.completions.create({ ...longReply, stream: true });
      await drain(stream);
      await fx.client.chat.completions.create(hello);
      expect(fx.emulator.abortedStreams).to.equal(0);
    });

    it('does not count streams the emulator closed on stop', async () => {
      fx.emulator.injectFault({ kind: 'stall-stream', afterEvents: 1 });
      const stream = await fx.client.chat.completions.create({ ...longReply, stream: true });
      const iterator = stream[Symbol.asyncIterator]();
      await iterator.next();
      await fx.emulator.stop();
      await rejection(iterator.next());
      expect(fx.emulator.abortedStreams).to.equal(0);
    });

    it('resolves at once for an abort that happened before the wait', async () => {
      fx.emulator.injectFault({ kind: 'stall-stream', afterEvents: 1 });
      const controller = new AbortController();
      const stream = await fx.client.chat.completions.create({ ...longReply, stream: true }, { signal: controller.signal });
      for await (const _chunk of stream) controller.abort();
      while (fx.emulator.abortedStreams === 0) await new Promise((resolve) => setImmediate(resolve));
      await fx.emulator.waitForAbortedStream();
      expect(fx.emulator.abortedStreams).to.equal(1);
    });
  });

  describe('api key', () => {
    const secured = freshEmulatorPerTest({ apiKey: 'secret' });

    it('rejects a wrong key with 401', async () => {
      const wrong = new OpenAI({ apiKey: 'nope', baseURL: secured.emulator.openaiBaseURL, maxRetries: 0 });
      const error = await rejection(wrong.chat.completions.create(hello));
      expect(error).to.be.instanceOf(OpenAI.AuthenticationError);
      expect(error).to.have.nested.property('error.code', 'invalid_api_key');
    });

    it('rejects a request without Authorization', async () => {
      const response = await fetch(`${secured.emulator.openaiBaseURL}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify(hello),
      });
      expect(response.status).to.equal(401);
    });

    it('accepts the right key', async () => {
      const right = new OpenAI({ apiKey: 'secret', baseURL: secured.emulator.openaiBaseURL, maxRetries: 0 });
      const completion = await right.chat.completions.create(hello);
      expect(completion.choices[0].message.content).to.contain('Hello');
    });
  });

  describe('routing', () => {
    it('answers an unknown path with a 404 envelope', async () => {
      const response = await fetch(`${fx.emulator.url}/v1/nowhere?x=1`);
      expect(response.status).to.equal(404);
      const body = (await response.json()) as { error: { message: string; type: string } };
      expect(body.error.message).to.equal('No emulated route for GET /v1/nowhere.');
      expect(fx.emulator.requests).to.deep.include({
        method: 'GET',
        path: '/v1/nowhere',
        query: { x: '1' },
        headers: fx.emulator.requests[0].headers,
        body: undefined,
        requestId: 'req_1',
      });
      expect(response.headers.get('x-request-id')).to.equal('req_1');
    });

    it('answers a wrong method with 405', async () => {
      const response = await fetch(`${fx.emulator.openaiBaseURL}/chat/completions`, { method: 'PUT' });
      expect(response.status).to.equal(405);
      expect(response.headers.get('allow')).to.equal('POST, GET');
    });

    it('answers an invalid JSON body with a clear 400', async () => {
      const response = await fetch(`${fx.emulator.openaiBaseURL}/chat/completions`, { method: 'POST', body: '{"model":' });
      expect(response.status).to.equal(400);
      const body = (await response.json()) as { error: { message: string } };
      expect(body.error.message).to.match(/^The request body is not valid JSON/);
    });

    it('dispatches registered routes with path params, query and body', async () => {
      fx.emulator.route('POST', '/v1/custom/:threadId/runs', (request, reply, context) => {
        reply.json(200, { params: request.params, query: request.query, body: request.body, id: context.ids.next('run_') });
      });
      const response = await fetch(`${fx.emulator.openaiBaseURL}/custom/thread%201/runs?limit=2`, {
        method: 'POST',
        body: '{"a":1}',
      });
      expect(await response.json()).to.deep.equal({
        params: { threadId: 'thread 1' },
        query: { limit: '2' },
        body: { a: 1 },
        id: 'run_1',
      });
    });

    it('writes named SSE events for services that use them', async () => {
      fx.emulator.route('GET', '/v1/events', async (_request, reply) => {
        const stream = reply.sse();
        await stream.send({ type: 'response.created' }, 'response.created');
        await stream.end();
      });
      const text = await (await fetch(`${fx.emulator.openaiBaseURL}/events`)).text();
      expect(text).to.equal('event: response.created\ndata: {"type":"response.created"}\n\n');
    });

    it('turns a throwing route into a 500 envelope', async () => {
      fx.emulator.route('GET', '/v1/broken', () => {
        throw new Error('route bug');
      });
      const response = await fetch(`${fx.emulator.openaiBaseURL}/broken`);
      expect(response.status).to.equal(500);
      expect(await response.json()).to.have.nested.property('error.message', 'The emulator failed: route bug');
    });
  });
});
