import { whenAborted } from '../concurrency/when-aborted.js';

/** Told when a run aborts; the shape of a DOM EventListenerObject, so it can listen on an AbortSignal as well. */
export interface RunAbortListener {
  handleEvent(): void;
}

/**
 * What can abort one run: the caller's signal, and for `runStream` also the consumer
 * unsubscribing. An AbortController is not free (its signal is a transferable platform object
 * and every request hangs a listener on it), so none is made until a tool asks for a signal:
 * the model stream in flight is cancelled by unsubscribing it (see `onAbort`), which aborts its
 * HTTP request.
 */
export class RunAbort {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #onAbort: RunAbortListener | undefined;
  #unlink: (() => void) | undefined;

  /**
   * @param callerSignal the caller's signal; the model call gets it as is.
   * @param own whether this run can also be aborted by `abort()` (runStream's unsubscribe).
   */
  constructor(
    readonly callerSignal: AbortSignal | undefined,
    readonly own: boolean,
  ) {}

  get aborted(): boolean {
    return this.#aborted || this.callerSignal?.aborted === true;
  }

  get reason(): unknown {
    return this.#aborted ? this.#reason : this.callerSignal?.reason;
  }

  /** The signal tools (and chat-client middleware) get: aborts whenever the run does. */
  get signal(): AbortSignal {
    if (!this.own && this.callerSignal) return this.callerSignal;
    if (!this.#controller) {
      const controller = new AbortController();
      this.#controller = controller;
      if (this.#aborted) controller.abort(this.#reason);
      else {
        const caller = this.callerSignal;
        this.#unlink = whenAborted(caller, () => controller.abort(caller?.reason));
      }
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    const listener = this.#onAbort;
    this.#onAbort = undefined;
    listener?.handleEvent();
  }

  /**
   * `listener.handleEvent()` runs once if `abort()` is called before `offAbort(listener)` (one
   * model call is in flight at a time). An object, not a closure: the same one can listen on the
   * caller's AbortSignal too, and a stream in flight holds one object instead of two functions.
   */
  onAbort(listener: RunAbortListener): void {
    this.#onAbort = listener;
  }

  offAbort(listener: RunAbortListener): void {
    if (this.#onAbort === listener) this.#onAbort = undefined;
  }

  /** Drops the listener on the caller's signal (the run is over). */
  dispose(): void {
    this.#unlink?.();
    this.#unlink = undefined;
  }
}
