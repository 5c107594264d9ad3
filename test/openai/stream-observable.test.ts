import { getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { lastValueFrom } from 'rxjs';
import { ChatAgent, ConfigurationError, DirectStream, runStreamFor } from 'skein';
import { Observable } from 'rxjs';
import { OpenAIChatClient } from 'skein/openai';
import { streamFromAsyncIterable } from '../../plugins/openai/stream-observable.js';

/**
 * The signal each stream opens with, as the `openai` SDK (6.x) uses it: it checks `aborted` and
 * adds an abort listener that it never removes. `hold` keeps the request before its "headers".
 */
function source(opened: AbortSignal[], options: { hold?: boolean; fail?: boolean; listenersAtOpen?: number[] } = {}) {
  return streamFromAsyncIterable<number, number>({
    open: (signal) => {
      opened.push(signal);
      options.listenersAtOpen?.push(getEventListeners(signal, 'abort').length);
      signal.addEventListener('abort', () => {}, { once: true });
      if (options.hold) return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted before headers')), { once: true }));
      if (options.fail) return Promise.reject(new Error('HTTP 500'));
      return (async function* () {
        yield 1;
        yield 2;
      })();
    },
    translate: () => ({ next: (chunk) => [chunk * 10], complete: () => [] }),
    toError: (error) => error as Error,
  });
}

describe('streamFromAsyncIterable (the OpenAI plugin\'s SDK stream)', () => {
  it('reuses the signal of a stream that ended on its own, with nothing of the earlier request left on it', async () => {
    const opened: AbortSignal[] = [];
    const listenersAtOpen: number[] = [];
    expect(await lastValueFrom(source(opened, { listenersAtOpen }))).to.equal(20);
    expect(await lastValueFrom(source(opened, { listenersAtOpen }))).to.equal(20);
    expect(opened[1]).to.equal(opened[0]);
    // The listener each request left was removed when its stream ended.
    expect(listenersAtOpen).to.deep.equal([0, 0]);
    expect(getEventListeners(opened[1]!, 'abort')).to.have.length(0);
    expect(opened[1]!.aborted).to.equal(false);
  });

  it('aborts a request whose headers have not arrived when unsubscribed, and never hands that signal out again', async () => {
    const opened: AbortSignal[] = [];
    const subscription = source(opened, { hold: true }).subscribe({ error: () => expect.fail('no error after unsubscribe') });
    await Promise.resolve();
    expect(opened).to.have.length(1);
    subscription.unsubscribe();
    expect(opened[0]!.aborted).to.equal(true);
    await lastValueFrom(source(opened));
    expect(opened[1]).to.not.equal(opened[0]);
    expect(opened[1]!.aborted).to.equal(false);
  });

  it("aborts through the caller's signal, and does not reuse the signal of a failed stream", async () => {
    const opened: AbortSignal[] = [];
    const caller = new AbortController();
    const failed = lastValueFrom(streamFromAsyncIterable<number, number>({
      signal: caller.signal,
      open: (signal) => {
        opened.push(signal);
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      },
      translate: () => ({ next: (chunk) => [chunk], complete: () => [] }),
      toError: (_error, signal) => new Error(`aborted: ${signal.aborted}`),
    }));
    await Promise.resolve();
    caller.abort();
    await failed.then(() => expect.fail('expected an error'), (e: Error) => expect(e.message).to.equal('aborted: true'));
    await lastValueFrom(source(opened, { fail: true })).catch(() => undefined);
    await lastValueFrom(source(opened));
    expect(opened).to.have.length(3);
    expect(opened[2]).to.not.equal(opened[0]);
    expect(opened[2]).to.not.equal(opened[1]);
  });

  it('a request that cannot even be built (open throws) errors the stream through toError, and its signal is neither aborted nor reused', async () => {
    const opened: AbortSignal[] = [];
    const stream = streamFromAsyncIterable<number, number>({
      open: (signal) => {
        opened.push(signal);
        throw new Error('no model');
      },
      translate: () => ({ next: (chunk) => [chunk], complete: () => [] }),
      toError: (error) => new Error(`mapped: ${(error as Error).message}`),
    });
    await lastValueFrom(stream).then(
      () => expect.fail('expected an error'),
      (e: Error) => expect(e.message).to.equal('mapped: no model'),
    );
    expect(opened[0]!.aborted).to.equal(false);
    await lastValueFrom(source(opened));
    expect(opened[1]).to.not.equal(opened[0]);
  });

  it('runStream and run with no model: a ConfigurationError, no request sent, the thread unchanged and usable once a model is given', async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const agent = new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'k', baseURL, maxRetries: 0 }) });
      const thread = agent.getNewThread();
      await lastValueFrom(agent.runStream('hello', { thread })).then(
        () => expect.fail('expected an error'),
        (e: unknown) => {
          expect(e).to.be.instanceOf(ConfigurationError);
          expect((e as Error).message).to.match(/No model for openai-chat/);
        },
      );
      await agent.run('hello', { thread }).then(
        () => expect.fail('expected an error'),
        (e: unknown) => expect(e).to.be.instanceOf(ConfigurationError),
      );
      expect(requests).to.equal(0);
      expect(await agent.getMessages(thread)).to.deep.equal([]);
      // The thread was released both times: a run with a model reaches the server.
      await agent.run('hello', { thread, chatOptions: { model: 'm' } }).catch(() => undefined);
      expect(requests).to.equal(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('DirectStream: the agent runs the OpenAI stream for one observer, without a Subscriber', () => {
  /** Runs `stream` directly, recording every event. */
  function runDirect(stream: Observable<number>) {
    const events: string[] = [];
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const handle = runStreamFor(stream, {
      next: (n) => events.push(`next ${n}`),
      error: (e: Error) => (events.push(`error ${e.message}`), settle()),
      complete: () => (events.push('complete'), settle()),
    });
    return { events, settled, handle };
  }

  it('gives the same events as subscribing, and a stream without the method is subscribed', async () => {
    const opened: AbortSignal[] = [];
    const stream = source(opened);
    expect(typeof (stream as unknown as Partial<DirectStream<number>>)[DirectStream]).to.equal('function');
    const direct = runDirect(stream);
    await direct.settled;
    const subscribed: string[] = [];
    await new Promise<void>((resolve) => stream.subscribe({ next: (n) => subscribed.push(`next ${n}`), complete: () => (subscribed.push('complete'), resolve()) }));
    expect(direct.events).to.deep.equal(['next 10', 'next 20', 'complete']);
    expect(direct.events).to.deep.equal(subscribed);
    // A plain Observable has no direct run: runStreamFor subscribes to it.
    const plain = runDirect(new Observable<number>((s) => (s.next(7), s.complete())));
    await plain.settled;
    expect(plain.events).to.deep.equal(['next 7', 'complete']);
  });

  it("tears itself down after its last event: the caller's signal keeps no listener and the stream's signal is reused", async () => {
    const caller = new AbortController();
    const opened: AbortSignal[] = [];
    const make = () =>
      streamFromAsyncIterable<number, number>({
        signal: caller.signal,
        open: (signal) => {
          opened.push(signal);
          return (async function* () {
            yield 1;
          })();
        },
        translate: () => ({ next: (chunk) => [chunk], complete: () => [] }),
        toError: (error) => error as Error,
      });
    for (let i = 0; i < 3; i++) await runDirect(make()).settled;
    expect(getEventListeners(caller.signal, 'abort')).to.have.length(0);
    expect(opened[1]).to.equal(opened[0]);
    // A failed direct run also lets go of the caller's signal.
    const failed = streamFromAsyncIterable<number, number>({
      signal: caller.signal,
      open: () => Promise.reject(new Error('HTTP 500')),
      translate: () => ({ next: (chunk) => [chunk], complete: () => [] }),
      toError: (error) => error as Error,
    });
    const run = runDirect(failed);
    await run.settled;
    expect(run.events).to.deep.equal(['error HTTP 500']);
    expect(getEventListeners(caller.signal, 'abort')).to.have.length(0);
  });

  it('unsubscribing aborts a request whose headers have not arrived, and nothing reaches the observer after', async () => {
    const opened: AbortSignal[] = [];
    const run = runDirect(source(opened, { hold: true }));
    await Promise.resolve();
    expect(opened).to.have.length(1);
    run.handle.unsubscribe();
    expect(opened[0]!.aborted).to.equal(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(run.events).to.deep.equal([]);
  });

  it('an observer that unsubscribes from inside next gets no further update', async () => {
    const events: number[] = [];
    const opened: AbortSignal[] = [];
    const handle: { unsubscribe?: () => void } = {};
    const subscription = runStreamFor(source(opened), {
      next: (n) => {
        events.push(n);
        handle.unsubscribe?.();
      },
      error: () => expect.fail('no error after unsubscribe'),
      complete: () => expect.fail('no completion after unsubscribe'),
    });
    handle.unsubscribe = () => subscription.unsubscribe();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).to.deep.equal([10]);
    expect(opened[0]!.aborted).to.equal(true);
  });
});
