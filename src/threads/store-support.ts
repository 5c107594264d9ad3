import { SerializationError, StoreError, ThreadConflictError } from '../errors/skein-error.js';
import type { JsonObject } from '../serialization/json.js';
import { checkShape } from '../serialization/shape.js';
import type { StoreLogger } from './store-logger.js';

export * from './store-logger.js';

/** What a database store key may look like (it travels in serialized threads). */
export const STORE_KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,200}$/;

/** Reads a database store's serialized state, `{ key }` (untrusted), checking the key's form. */
export function readStoreKey(state: JsonObject, path: string): string {
  const key = checkShape(state, path, { required: { key: 'string' } }).key as string;
  if (!STORE_KEY_PATTERN.test(key)) throw new SerializationError(`${path}.key`, 'expected a store key of 1-200 letters, digits, "_", ".", ":" or "-".');
  return key;
}

/** What a version-checked append reports when another process appended first. */
export function storeConflictError(key: string, expected: number, actual: number): ThreadConflictError {
  return new ThreadConflictError(
    `Thread ${key} changed since this instance read it (expected version ${expected}, found ${actual}): another process appended a turn. ` +
      'Nothing of this turn was written; deserialize or reload the thread and run the turn again.',
    expected,
    actual,
  );
}

/** Said when an append failed after it may have reached the server. */
export const UNKNOWN_APPEND_OUTCOME =
  'The connection failed after the turn was sent, so it may or may not have been written. Retry the append from this ' +
  'instance (it fails with ThreadConflictError if the turn did land) or reload the thread to see.';

/** Checks the retention options every database store takes. */
export function checkRetentionOptions(store: string, options: { maxMessages?: number; ttlSeconds?: number }, ttl: 'integer' | 'number' = 'number'): void {
  if (options.maxMessages !== undefined && !(Number.isInteger(options.maxMessages) && options.maxMessages > 0)) {
    throw new StoreError(store, `maxMessages must be a positive integer, found ${options.maxMessages}.`);
  }
  const ttlOk = options.ttlSeconds === undefined || (options.ttlSeconds > 0 && (ttl === 'number' || Number.isInteger(options.ttlSeconds)));
  if (!ttlOk) throw new StoreError(store, `ttlSeconds must be a positive ${ttl === 'integer' ? 'integer' : 'number'}, found ${options.ttlSeconds}.`);
}

/** What a store found out about the durability of its server. */
export interface StoreDurabilityReport {
  /** The server settings read (e.g. `appendonly`, `synchronous_commit`); empty when they could not be read. */
  readonly settings: Readonly<Record<string, string>>;
  /** What is at risk and how to fix it; undefined when an acknowledged turn survives a server crash and a power loss. */
  readonly warning?: string;
}

/**
 * Runs a store's durability check once per factory, after its first successful call (so a down
 * server fails that call with its own error, not the check's), and logs the warning, if any,
 * once. A check that fails (the connection dropped) runs again after the next successful call.
 */
export class DurabilityCheckOnce {
  #done = false;
  #running: Promise<void> | undefined;

  constructor(
    private readonly check: () => Promise<StoreDurabilityReport>,
    private readonly logger: () => StoreLogger,
  ) {}

  /** Whether the check has run (and logged what it found). */
  get done(): boolean {
    return this.#done;
  }

  /** Call after each successful store call; cheap once done. Never throws. */
  async afterSuccess(): Promise<void> {
    if (this.#done) return;
    this.#running ??= this.check().then(
      (report) => {
        this.#done = true;
        try {
          if (report.warning) this.logger().warn(report.warning);
        } catch {
          // A logger that throws must not fail the store call it rides on.
        }
      },
      () => {
        this.#running = undefined;
      },
    );
    await this.#running;
  }
}
