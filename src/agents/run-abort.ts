import { whenAborted } from '../concurrency/when-aborted.js';

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
  #onAbort: (() => void) | undefined;
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
    const cancel = this.#onAbort;
    this.#onAbort = undefined;
    cancel?.();
  }

  /** `cancel` runs once if `abort()` is called before the returned unregister (one model call is in flight at a time). */
  onAbort(cancel: () => void): () => void {
    this.#onAbort = cancel;
    return () => {
      if (this.#onAbort === cancel) this.#onAbort = undefined;
    };
  }

  /** Drops the listener on the caller's signal (the run is over). */
  dispose(): void {
    this.#unlink?.();
    this.#unlink = undefined;
  }
}
