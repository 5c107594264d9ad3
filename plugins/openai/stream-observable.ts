// Observable alone: the rxjs index loads every operator (megabytes of RSS); same class either way.
// The declarations name rxjs's public Observable type; the class comes from its own module.
import type { Observable } from 'rxjs';
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
 * A cold Observable over an SDK stream, after RxJS's `fromFetch`: one request per subscription,
 * an AbortController per subscription (the caller's signal chained in), and unsubscribe aborts
 * the request. Not `from(asyncIterable)`: that has no teardown.
 */
export function streamFromAsyncIterable<TChunk, TUpdate>(source: StreamSource<TChunk, TUpdate>): Observable<TUpdate> {
  return new RxObservable<TUpdate>((subscriber) => {
    const controller = new AbortController();
    const outer = source.signal;
    const unlink = whenAborted(outer, () => controller.abort(outer?.reason));

    // Set once the stream ended on its own: teardown then has nothing to abort, and aborting
    // anyway costs a DOMException and an abort event per stream.
    let ended = false;
    (async () => {
      const translator = source.translate();
      const stream = await source.open(controller.signal);
      for await (const chunk of stream) {
        if (subscriber.closed) return;
        for (const update of translator.next(chunk)) subscriber.next(update);
      }
      if (subscriber.closed) return;
      for (const update of translator.complete()) subscriber.next(update);
      ended = true;
      subscriber.complete();
    })().catch((error: unknown) => {
      if (subscriber.closed) return;
      ended = true;
      subscriber.error(source.toError(error, controller.signal));
    });

    return () => {
      unlink();
      if (!ended) controller.abort();
    };
  });
}
