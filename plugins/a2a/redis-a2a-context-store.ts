import type * as IORedis from 'ioredis';
import type { Redis } from 'ioredis';
import { loadPeer } from 'skein';
import { A2A_ENTRY_POINT } from './a2a-peers.js';
import { type SerializedThread, StoreError, ThreadConflictError } from 'skein';
import type { A2AContextStore, StoredA2AContext } from './a2a-context-store.js';

export interface RedisA2AContextStoreOptions {
  /** `redis://[user:password@]host:port[/db]`; default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Use this ioredis client (e.g. the one your message store uses) instead of connecting; you close it. */
  client?: Redis;
  /** Prefix of every key this store writes. Default `skein:a2a:`. */
  keyPrefix?: string;
  /** Redis expires a context this many seconds after its last turn. Default: never. */
  ttlSeconds?: number;
}

/** Compare-and-set in one step: the version must still be the one the turn read. */
const SAVE = `
local current = redis.call('HGET', KEYS[1], 'version')
local expected = ARGV[1]
if (expected == '' and current) or (expected ~= '' and current ~= expected) then
  return {0, current or ''}
end
local version = (tonumber(current) or 0) + 1
redis.call('HSET', KEYS[1], 'thread', ARGV[2], 'version', version)
redis.call('HSETNX', KEYS[1], 'owner', ARGV[3])
if tonumber(ARGV[4]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[4]) end
return {1, tostring(version)}
`;

/**
 * A2A contexts in Redis, one hash per context (`thread`, `version`, `owner`), saved with a
 * server-side version check: several A2AServer processes sharing it continue any context, and
 * two turns on one context never overwrite each other.
 *
 * @example
 * const server = new A2AServer({ agent, contextStore: new RedisA2AContextStore({ url: process.env.REDIS_URL }) });
 */
export class RedisA2AContextStore implements A2AContextStore {
  readonly #client: Redis;
  readonly #owned: boolean;
  readonly #prefix: string;
  readonly #ttl: number;

  constructor(options: RedisA2AContextStoreOptions = {}) {
    this.#owned = options.client === undefined;
    // ioredis is an optional peer: loaded when a store needs a connection of its own.
    const { Redis: RedisClient } = options.client ? { Redis: undefined } : loadPeer<typeof IORedis>(A2A_ENTRY_POINT, 'ioredis');
    this.#client = options.client ?? new RedisClient!(options.url ?? 'redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
    this.#prefix = options.keyPrefix ?? 'skein:a2a:';
    this.#ttl = options.ttlSeconds ?? 0;
  }

  async load(contextId: string): Promise<StoredA2AContext | undefined> {
    const [thread, version, owner] = await this.#call(() => this.#client.hmget(this.#key(contextId), 'thread', 'version', 'owner'));
    if (thread === null || thread === undefined || version === null || version === undefined) return undefined;
    return { thread: JSON.parse(thread) as SerializedThread, version: Number(version), owner: owner ?? '' };
  }

  async save(contextId: string, thread: SerializedThread, expectedVersion: number | undefined, owner: string): Promise<number> {
    const args = [expectedVersion === undefined ? '' : String(expectedVersion), JSON.stringify(thread), owner, String(this.#ttl)];
    const [ok, value] = (await this.#call(() => this.#client.eval(SAVE, 1, this.#key(contextId), ...args))) as [number, string];
    if (ok === 1) return Number(value);
    const found = value === '' ? undefined : Number(value);
    throw new ThreadConflictError(
      `A2A context ${contextId} changed since this turn read it (expected version ${expectedVersion ?? 'none'}, found ${found ?? 'none'}); send the turn again.`,
      expectedVersion,
      found,
    );
  }

  async delete(contextId: string): Promise<void> {
    await this.#call(() => this.#client.del(this.#key(contextId)));
  }

  /** Closes the connection this store opened (not a client you passed in). */
  async close(): Promise<void> {
    if (this.#owned) this.#client.disconnect();
  }

  #key(contextId: string): string {
    return `${this.#prefix}${contextId}`;
  }

  async #call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw new StoreError('redis', `The A2A context store could not reach Redis: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}
