// Observable alone: the rxjs index loads every operator (megabytes of RSS); same class either way.
// The declarations name rxjs's public Observable type; the class comes from its own module.
import { getEventListeners } from 'node:events';
import type { Observable, Subscriber, Unsubscribable } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import { whenAborted } from 'skein';

export interface StreamTranslator<TChunk, TUpdate> {
  next(chunk: TChunk): TUpdate[];
  complete(): TUpdate[];
}

export interface StreamSource<TChunk, TUpdate> {
  /** The caller's signal; aborting it ends the stream with an error. */
  signal?: AbortSignal;
  /** Opens the SDK stream with the subscription's own signal. */
  open: (signal: AbortSignal) => Promise<AsyncIterable<TChunk>> | AsyncIterable<TChunk>;
  /** A fresh translator per subscription (it may hold per-stream state). */
  translate: () => StreamTranslator<TChunk, TUpdate>;
  toError: (error: unknown, signal: AbortSignal) => Error;
}

/**
 * Controllers of streams that ended on their own, for the next stream. Making an AbortSignal
 * costs Node 20 several microseconds (it changes the prototype of a new EventTarget, then adds
 * fields), the largest item of a streamed turn's own profile, and the signal is what aborts a
 * request before its response headers arrive, so every stream needs one. `openai` adds an
 * abort listener to the signal of each request and never removes it: those are removed before
 * a controller is reused (only never-aborted ones are), so a reused signal carries nothing of
 * an earlier request. A few are kept: concurrent streams beyond that make their own.
 */
const idleControllers: AbortController[] = [];
const MAX_IDLE_CONTROLLERS = 16;

function takeController(): AbortController {
  return idleControllers.pop() ?? new AbortController();
}

function reuseLater(controller: AbortController): void {
  const signal = controller.signal;
  if (signal.aborted || idleControllers.length >= MAX_IDLE_CONTROLLERS) return;
  for (const listener of getEventListeners(signal, 'abort')) {
    signal.removeEventListener('abort', listener as EventListener);
    signal.removeEventListener('abort', listener as EventListener, { capture: true });
  }
  if (signal.onabort !== null) signal.onabort = null;
  idleControllers.push(controller);
}

/**
 * A cold Observable over an SDK stream, after RxJS's `fromFetch`: one request per subscription,
 * an AbortController per subscription (the caller's signal chained in; reused once a stream has
 * ended on its own, see idleControllers), and unsubscribe aborts the request. Not
 * `from(asyncIterable)`: that has no teardown.
 */
export function streamFromAsyncIterable<TChunk, TUpdate>(source: StreamSource<TChunk, TUpdate>): Observable<TUpdate> {
  return new RxObservable<TUpdate>((subscriber) => new StreamPump(source, subscriber).start());
}

/**
 * One subscription's request and its teardown (RxJS calls `unsubscribe`). Until the reply
 * arrives, a stream holds this object and one promise callback: no suspended async function,
 * whose frame would be kept for every stream in flight (docs/performance.md, RSS per active run).
 */
class StreamPump<TChunk, TUpdate> implements Unsubscribable {
  readonly #source: StreamSource<TChunk, TUpdate>;
  readonly #subscriber: Subscriber<TUpdate>;
  readonly #controller = takeController();
  #unlink: (() => void) | undefined;
  // Set once the stream ended: teardown then has nothing to abort, and aborting anyway costs a
  // DOMException and an abort event per stream. Completed: the request is over, its
  // controller can serve another.
  #ended = false;
  #completed = false;

  constructor(source: StreamSource<TChunk, TUpdate>, subscriber: Subscriber<TUpdate>) {
    this.#source = source;
    this.#subscriber = subscriber;
  }

  start(): this {
    const outer = this.#source.signal;
    if (outer) {
      const controller = this.#controller;
      this.#unlink = whenAborted(outer, () => controller.abort(outer.reason));
    }
    let opened: ReturnType<StreamSource<TChunk, TUpdate>['open']>;
    try {
      opened = this.#source.open(this.#controller.signal);
    } catch (error) {
      this.#fail(error);
      return this;
    }
    Promise.resolve(opened).then(
      (stream) => this.#pump(stream),
      (error: unknown) => this.#fail(error),
    );
    return this;
  }

  async #pump(stream: AsyncIterable<TChunk>): Promise<void> {
    const subscriber = this.#subscriber;
    try {
      const translator = this.#source.translate();
      for await (const chunk of stream) {
        if (subscriber.closed) return;
        for (const update of translator.next(chunk)) subscriber.next(update);
      }
      if (subscriber.closed) return;
      for (const update of translator.complete()) subscriber.next(update);
      this.#ended = true;
      this.#completed = true;
      subscriber.complete();
    } catch (error) {
      this.#fail(error);
    }
  }

  #fail(error: unknown): void {
    if (this.#subscriber.closed) return;
    this.#ended = true;
    this.#subscriber.error(this.#source.toError(error, this.#controller.signal));
  }

  unsubscribe(): void {
    this.#unlink?.();
    if (!this.#ended) this.#controller.abort();
    else if (this.#completed) reuseLater(this.#controller);
  }
}
