// Observable alone: the rxjs index loads every operator (megabytes of RSS); same class either way.
// The declarations name rxjs's public Observable type; the class comes from its own module.
import { getEventListeners } from 'node:events';
import type { Observable, Observer, Unsubscribable } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import { DirectStream, whenAborted } from 'skein';

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
 * `from(asyncIterable)`: that has no teardown. The agent runs it directly (DirectStream).
 */
export function streamFromAsyncIterable<TChunk, TUpdate>(source: StreamSource<TChunk, TUpdate>): Observable<TUpdate> {
  return new SourceObservable(source);
}

class SourceObservable<TChunk, TUpdate> extends RxObservable<TUpdate> implements DirectStream<TUpdate> {
  readonly #source: StreamSource<TChunk, TUpdate>;

  constructor(source: StreamSource<TChunk, TUpdate>) {
    super((subscriber) => new StreamPump(source, subscriber).start());
    this.#source = source;
  }

  [DirectStream](observer: Observer<TUpdate>): Unsubscribable {
    return new StreamPump(this.#source, observer).start();
  }
}

/**
 * One run of the stream (a subscription, or a direct run) and its teardown: RxJS calls
 * `unsubscribe`, as does a direct runner. Until the reply arrives, a stream holds this object and
 * one promise callback: no suspended async function, whose frame would be kept for every stream
 * in flight (docs/performance.md, RSS per active run). Nothing reaches the observer once it has
 * errored, completed or been unsubscribed.
 */
class StreamPump<TChunk, TUpdate> implements Unsubscribable {
  readonly #source: StreamSource<TChunk, TUpdate>;
  readonly #observer: Observer<TUpdate>;
  readonly #controller = takeController();
  #unlink: (() => void) | undefined;
  // Closed: the observer has had its last event, or was unsubscribed.
  #closed = false;
  // Set once the stream ended: teardown then has nothing to abort, and aborting anyway costs a
  // DOMException and an abort event per stream. Completed: the request is over, its
  // controller can serve another.
  #ended = false;
  #completed = false;
  #released = false;

  constructor(source: StreamSource<TChunk, TUpdate>, observer: Observer<TUpdate>) {
    this.#source = source;
    this.#observer = observer;
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
    const observer = this.#observer;
    try {
      const translator = this.#source.translate();
      for await (const chunk of stream) {
        if (this.#closed) return;
        for (const update of translator.next(chunk)) {
          observer.next(update);
          if (this.#closed) return;
        }
      }
      if (this.#closed) return;
      for (const update of translator.complete()) {
        observer.next(update);
        if (this.#closed) return;
      }
      this.#ended = true;
      this.#completed = true;
      this.#closed = true;
      observer.complete();
      this.unsubscribe(); // a direct run has no Subscriber to tear it down
    } catch (error) {
      this.#fail(error);
    }
  }

  #fail(error: unknown): void {
    if (this.#closed) return;
    this.#ended = true;
    this.#closed = true;
    this.#observer.error(this.#source.toError(error, this.#controller.signal));
    this.unsubscribe();
  }

  /** Once: a subscription's teardown also runs when the observer has had its last event. */
  unsubscribe(): void {
    this.#closed = true;
    if (this.#released) return;
    this.#released = true;
    this.#unlink?.();
    if (!this.#ended) this.#controller.abort();
    else if (this.#completed) reuseLater(this.#controller);
  }
}
