import type { Observable, Observer, Unsubscribable } from 'rxjs';

/**
 * A chat client's update stream that can also run for one observer without RxJS's subscriber
 * objects: the same events and the same teardown as `subscribe`, for the agent's own model calls.
 * A stream in flight then holds no Subscriber, no wrapped observer and no list of finalizers
 * (bytes per concurrent run, docs/performance.md). Optional: an Observable without it is subscribed.
 * The observer gets nothing after `error`, `complete` or `unsubscribe`.
 */
export const DirectStream: unique symbol = Symbol('DirectStream');

export interface DirectStream<T> {
  [DirectStream](observer: Observer<T>): Unsubscribable;
}

/** Runs `stream` for `observer`: directly when the stream offers it, else by subscribing. */
export function runStreamFor<T>(stream: Observable<T>, observer: Observer<T>): Unsubscribable {
  const direct = (stream as Observable<T> & Partial<DirectStream<T>>)[DirectStream];
  return direct ? direct.call(stream, observer) : stream.subscribe(observer);
}
