/**
 * A misbehaviour the emulator applies to the next requests it matches: by `path` (exact) and
 * `method` (e.g. `POST`) when given, else any request.
 */
export type Fault = FaultKind & { method?: string };
type FaultKind =
  | { kind: 'status'; status: number; times?: number; path?: string; retryAfterSeconds?: number; message?: string }
  /**
   * A slow reply. `phase: 'request'` (the default) waits before the route runs; `'reply'` lets the
   * route do its work (a run is created) and holds its JSON reply back: a slow network on the
   * way back, the window where the client gives up without the id of what it created.
   */
  | { kind: 'latency'; ms: number; times?: number; path?: string; phase?: 'request' | 'reply' }
  /** Destroys the socket mid-stream after N SSE events (no [DONE]). */
  | { kind: 'cut-stream'; afterEvents: number; times?: number; path?: string }
  /** Sends N SSE events, then holds the stream open until the client goes away. */
  | { kind: 'stall-stream'; afterEvents: number; times?: number; path?: string }
  /** 200, content-type json, a body that is not JSON. */
  | { kind: 'garbage-json'; times?: number; path?: string }
  /** A stream whose first data: line is broken JSON. */
  | { kind: 'malformed-sse'; times?: number; path?: string };

interface PendingFault {
  fault: Fault;
  remaining: number;
}

/** Faults in injection order; each request consumes one use of the first fault matching its path. */
export class FaultQueue {
  private pending: PendingFault[] = [];

  add(fault: Fault): void {
    const times = fault.times ?? 1;
    if (!Number.isInteger(times) || times < 1) {
      throw new RangeError(`Fault times must be a positive integer, got ${String(fault.times)}.`);
    }
    this.pending.push({ fault, remaining: times });
  }

  clear(): void {
    this.pending = [];
  }

  take(path: string, method?: string): Fault | undefined {
    const index = this.pending.findIndex(
      (entry) =>
        (entry.fault.path === undefined || entry.fault.path === path) &&
        (entry.fault.method === undefined || method === undefined || entry.fault.method.toUpperCase() === method),
    );
    if (index < 0) return undefined;
    const entry = this.pending[index];
    entry.remaining--;
    if (entry.remaining === 0) this.pending.splice(index, 1);
    return entry.fault;
  }
}
