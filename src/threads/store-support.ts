import { SerializationError, StoreError, ThreadConflictError } from '../errors/skein-error.js';
import type { JsonObject } from '../serialization/json.js';
import { checkShape } from '../serialization/shape.js';

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
