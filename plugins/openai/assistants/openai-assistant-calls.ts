import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { AbortError } from 'skein';
import { toSkeinError } from '../openai-errors.js';

export const OPENAI_ASSISTANTS_CLIENT_ID = 'openai-assistants';

/** One SDK call; its failure becomes the typed Skein error (AbortError when `signal` aborted). */
export async function call<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toSkeinError(OPENAI_ASSISTANTS_CLIENT_ID, error, signal);
  }
}

/**
 * The SDK adds an abort listener to the request signal per call and a long poll makes many
 * calls: each turn gets its own signal (the caller's linked in once) with no listener limit.
 */
export function ownController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new AbortError(undefined, { cause: signal.reason });
}

/** Waits `ms`; an abort ends the wait with an AbortError. */
export async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  await sleep(ms, undefined, { signal }).catch((e: unknown) => {
    throw new AbortError(undefined, { cause: e });
  });
}

/** The service's `openai-poll-after-ms` hint, when it sent one. */
export function pollHint(response: Response): number | undefined {
  const value = Number.parseInt(response.headers.get('openai-poll-after-ms') ?? '', 10);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}
