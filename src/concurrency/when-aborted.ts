/**
 * Calls `action` when `signal` aborts, at once when it already has; returns what takes the
 * listener off again (a long-lived signal would otherwise keep every listener hung on it).
 */
export function whenAborted(signal: AbortSignal | undefined, action: () => void): () => void {
  if (!signal) return nothing;
  if (signal.aborted) {
    action();
    return nothing;
  }
  signal.addEventListener('abort', action, { once: true });
  return () => signal.removeEventListener('abort', action);
}

/** One shared no-op: nothing to take off needs no closure of its own. */
function nothing(): void {}
