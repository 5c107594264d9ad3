import { pg } from './dbos-peers.js';

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', '57P01', '57P03', '08001', '08006', '08003']);

/** A lost or refused connection to PostgreSQL (not a query's own error). */
export function isConnectionFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: string }).code;
    if (code && CONNECTION_CODES.has(code)) return true;
    if (e instanceof AggregateError && e.errors.some(isConnectionFailure)) return true;
    if (/Connection terminated|connect ECONNREFUSED|timeout expired/i.test((e as Error).message ?? '')) return true;
  }
  return false;
}

const PROBE_INTERVAL_MS = 1_000;

/**
 * Watches the system database for the runner's pending calls and open streams: one probe loop
 * per runner, however many wait (a server with many readers makes one connection a second, not
 * one per reader), running only while someone waits, its first probe a second after it starts
 * (a quick call never probes). Every watcher is rejected once every probe for `afterMs` failed.
 */
export class OutageMonitor {
  readonly #url: string;
  readonly #afterMs: number;
  readonly #waiters = new Set<(error: unknown) => void>();
  #running = false;

  constructor(url: string, afterMs: number) {
    this.#url = url;
    this.#afterMs = afterMs;
  }

  /** Rejects once the database has been unreachable for `afterMs`, unless `signal` is aborted first; never resolves. */
  watch(signal: AbortSignal): Promise<never> {
    return new Promise<never>((_, reject) => {
      if (signal.aborted) return;
      this.#waiters.add(reject);
      signal.addEventListener('abort', () => this.#waiters.delete(reject), { once: true });
      if (!this.#running) void this.#loop();
    });
  }

  async #loop(): Promise<void> {
    this.#running = true;
    let downSince: number | undefined;
    try {
      while (this.#waiters.size) {
        await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS).unref());
        if (!this.#waiters.size) break;
        const failure = await probe(this.#url);
        if (!failure) downSince = undefined;
        else if (isConnectionFailure(failure) && (downSince ??= Date.now()) + this.#afterMs <= Date.now()) {
          for (const reject of this.#waiters) reject(failure);
          this.#waiters.clear();
        }
      }
    } finally {
      this.#running = false;
    }
  }
}

/** The error of one `SELECT 1` on a new connection, or undefined when it worked. */
async function probe(url: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_INTERVAL_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await client.end().catch(() => {});
  }
}
