import type * as IORedis from 'ioredis';
import { ConfigurationError, loadPeer } from 'skein';
import { AG_UI_ENTRY_POINT } from './ag-ui-peers.js';
import { type AgUiThreadRecord, type AgUiThreadStore, type StoredAgUiThread, conflictError } from './ag-ui-thread-store.js';

export interface RedisAgUiThreadStoreOptions {
  /** A client of your own (you close it), or a URL for one made here (`close` ends it). */
  client?: IORedis.Redis;
  url?: string;
  /** Default `skein:ag-ui:`: each record is the hash `<prefix><threadId>`. */
  keyPrefix?: string;
}

/** Compare-and-set in one step: the save lands only if the stored version is the expected one ('' = none). */
const SAVE = `
local current = redis.call('HGET', KEYS[1], 'version')
if (current or '') ~= ARGV[1] then return {0, current or ''} end
local version = (tonumber(current) or 0) + 1
redis.call('HSET', KEYS[1], 'version', version, 'record', ARGV[2])
return {1, version}`;

/**
 * AG-UI thread records in Redis, for several server instances (see PostgresAgUiThreadStore):
 * each save is checked against the version read, in one Lua step. Needs `ioredis`.
 *
 * @example
 * const server = new AgUiServer({ agents, threads: new RedisAgUiThreadStore({ url: process.env.REDIS_URL }) });
 */
export class RedisAgUiThreadStore implements AgUiThreadStore {
  readonly #client: IORedis.Redis;
  readonly #owned: boolean;
  readonly #prefix: string;

  constructor(options: RedisAgUiThreadStoreOptions) {
    if (!options.client && !options.url) throw new ConfigurationError('RedisAgUiThreadStore needs a client or a url.');
    this.#owned = !options.client;
    this.#client = options.client ?? new (loadPeer<typeof IORedis>(AG_UI_ENTRY_POINT, 'ioredis').Redis)(options.url!);
    this.#prefix = options.keyPrefix ?? 'skein:ag-ui:';
  }

  async load(threadId: string): Promise<StoredAgUiThread | undefined> {
    const [version, record] = await this.#client.hmget(this.#prefix + threadId, 'version', 'record');
    return version && record ? { ...(JSON.parse(record) as AgUiThreadRecord), version: Number(version) } : undefined;
  }

  async save(threadId: string, record: AgUiThreadRecord, expectedVersion: number | undefined): Promise<number> {
    const [saved, version] = (await this.#client.eval(SAVE, 1, this.#prefix + threadId, expectedVersion === undefined ? '' : String(expectedVersion), JSON.stringify(record))) as [number, string | number];
    if (saved === 1) return Number(version);
    throw conflictError(threadId, expectedVersion, version === '' ? undefined : Number(version));
  }

  /** Ends the client made from `url` (a client you passed is yours to close). */
  async close(): Promise<void> {
    if (this.#owned) await this.#client.quit();
  }
}
