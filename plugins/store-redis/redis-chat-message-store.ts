import { Redis } from './redis-peers.js';
import {
  type AppendOutcome,
  type JsonObject,
  readStoreKey,
  redactUrl,
  scrubSecrets,
  ServerStoreFactory,
  type ServerStoreOptions,
  SkeinError,
  type StoreDurabilityReport,
  type StoredTail,
  StoreError,
  type StoreRestoreContext,
  UNKNOWN_APPEND_OUTCOME,
  VersionedChatMessageStore,
} from 'skein';

export const REDIS_STORE_ID = 'redis';

export interface RedisStoreOptions extends ServerStoreOptions {
  /** `redis://[user:password@]host:port[/db]`; default `redis://127.0.0.1:6379`. The password never leaves the client. */
  url?: string;
  /** Use this ioredis client instead of connecting (the caller closes it). */
  client?: Redis;
  /** Prefix of every key this store writes. Default `skein:`. */
  keyPrefix?: string;
  /** Redis expires a thread this many seconds after its last append. */
  ttlSeconds?: number;
  /** Connect timeout in ms, covering TCP, AUTH and the ready check. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * A command the server has not answered after this many ms fails with a StoreError (a hung
   * server). Default 30000. For an append the outcome is then unknown; see the error text.
   */
  commandTimeoutMs?: number;
  /**
   * Read the server's persistence settings (`CONFIG GET appendonly`, `appendfsync`, `save`) after
   * the first successful call and warn once when acknowledged turns could be lost on a server
   * crash or power loss. Default true; turn it off once you have checked (or for a managed
   * service that forbids CONFIG, which is reported as "could not read").
   */
  durabilityCheck?: boolean;
}


/** Lua: RPUSH the entries of table `values` from index `first` on to `key`, 1,000 at a time (unpack's stack limit). */
function luaPushChunked(key: string, values: string, first: number): string {
  return `local i = ${first}
while i <= #${values} do
  local j = math.min(i + 999, #${values})
  redis.call('RPUSH', ${key}, unpack(${values}, i, j))
  i = j + 1
end`;
}

/**
 * The append is one Lua script, so it runs atomically on the server: check the thread's version,
 * push the turn, bump the version, trim and set the TTL. A lost race writes nothing.
 */
const APPEND_SCRIPT = `
local actual = tonumber(redis.call('GET', KEYS[2]) or '0')
if actual ~= tonumber(ARGV[1]) then return {0, actual} end
local max = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
${luaPushChunked('KEYS[1]', 'ARGV', 4)}
local nextVersion = actual + #ARGV - 3
redis.call('SET', KEYS[2], nextVersion)
if max > 0 then redis.call('LTRIM', KEYS[1], -max, -1) end
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
return {1, nextVersion}
`;

/**
 * A fork is one script too: copy the first ARGV[1] messages of KEYS[1] to a new list KEYS[2],
 * set its version KEYS[3] and TTL. The keys of two threads hash to different slots, so on a
 * Redis Cluster a fork fails (CROSSSLOT); forks need a single Redis (or a replica set).
 */
const FORK_SCRIPT = `
local items = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
if #items == 0 then return 0 end
${luaPushChunked('KEYS[2]', 'items', 1)}
redis.call('SET', KEYS[3], #items)
local ttl = tonumber(ARGV[2])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[2], ttl)
  redis.call('EXPIRE', KEYS[3], ttl)
end
return #items
`;

type ForkCommand = (sourceList: string, list: string, version: string, count: string, ttl: string) => Promise<number>;

type AppendCommand = (listKey: string, versionKey: string, ...args: string[]) => Promise<[number, number]>;

/**
 * Makes Redis-backed stores: a thread is a list of JSON messages plus a version counter (under
 * one hash tag, so it also works on a cluster); a serialized thread holds only its key. After
 * its first successful call it checks the server's persistence and warns once through `logger`
 * when acknowledged turns could be lost (`durabilityCheck: false` turns that off).
 *
 * @example
 * ```ts
 * const factory = new RedisChatMessageStoreFactory({ url: 'redis://127.0.0.1:6379', logger: { warn: (m) => console.warn(m) } });
 * const store = factory.create();
 * await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'Hi' }] }]);
 * const { settings, warning } = await factory.checkDurability(); // { appendonly: 'yes', appendfsync: 'always', ... }
 * await factory.close();
 * ```
 */
export class RedisChatMessageStoreFactory extends ServerStoreFactory<RedisChatMessageStore, RedisStoreOptions> {
  readonly type = REDIS_STORE_ID;
  readonly #url: string;
  #redis: Redis | undefined;
  #connecting: Promise<void> | undefined;

  constructor(options: RedisStoreOptions = {}) {
    // `options` is public and easily logged: keep the address, never the password. EXPIRE takes whole seconds.
    super(REDIS_STORE_ID, options, { ...options, ...(options.url === undefined ? {} : { url: redactUrl(options.url) }) }, 'integer');
    this.#url = options.url ?? 'redis://127.0.0.1:6379';
  }

  /** The server address with any password masked: safe for logs and messages. */
  get redactedUrl(): string {
    return redactUrl(this.#url);
  }

  /**
   * Reads the server's persistence settings and says what an acknowledged turn is exposed to
   * (the store runs this once by itself unless `durabilityCheck: false`). A server that refuses
   * CONFIG (ACL, or a managed service that renames it) gives empty settings and a warning saying
   * the check could not be made.
   */
  async checkDurability(): Promise<StoreDurabilityReport> {
    const replies = await this.#call(async (redis) => {
      const pipeline = redis.pipeline();
      for (const name of PERSISTENCE_SETTINGS) pipeline.config('GET', name);
      return (await pipeline.exec()) ?? [];
    });
    const settings: Record<string, string> = {};
    for (const [i, [error, reply]] of replies.entries()) {
      if (error) {
        if (!(error instanceof Error && error.name === 'ReplyError')) throw this.#storeError(error);
        return { settings: {}, warning: redisUncheckedWarning(this.redactedUrl, scrubSecrets(error.message, this.#url)) };
      }
      const [, value] = reply as [string?, string?];
      settings[PERSISTENCE_SETTINGS[i]!] = value ?? '';
    }
    return { settings, warning: redisPersistenceWarning(this.redactedUrl, settings) };
  }

  async restore(state: JsonObject, context: StoreRestoreContext): Promise<RedisChatMessageStore> {
    const key = readStoreKey(state, context.path);
    const version = await this.run(async (redis) => redis.get(this.versionKey(key)));
    return this.storeFor(key, Number(version ?? 0));
  }

  /** @internal */
  storeFor(key: string, version: number): RedisChatMessageStore {
    return new RedisChatMessageStore(this, key, version);
  }

  /** Redis expires threads itself; nothing to prune. Returns 0. */
  async prune(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    const redis = this.#redis;
    this.#redis = undefined;
    if (!redis || this.options.client) return;
    // QUIT waits for a reply; a connection that never became ready would never give one.
    if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
    else redis.disconnect();
  }

  /** @internal */
  listKey(key: string): string {
    return `${this.options.keyPrefix ?? 'skein:'}{${key}}:m`;
  }

  /** @internal */
  versionKey(key: string): string {
    return `${this.options.keyPrefix ?? 'skein:'}{${key}}:v`;
  }

  /** @internal */
  append(redis: Redis, ...args: string[]): Promise<[number, number]> {
    return (redis as unknown as { skeinAppend: AppendCommand }).skeinAppend(args[0]!, args[1]!, ...args.slice(2));
  }

  /** @internal */
  forkCommand(redis: Redis, from: string, to: string, count: number): Promise<number> {
    return (redis as unknown as { skeinFork: ForkCommand }).skeinFork(this.listKey(from), this.listKey(to), this.versionKey(to), String(count), String(this.options.ttlSeconds ?? 0));
  }

  /**
   * @internal Runs commands on the (lazily connected) client, turning failures into StoreError.
   * `write`: the call appends a turn, so a failure whose outcome is unknown says so.
   */
  async run<T>(fn: (redis: Redis) => Promise<T>, write = false): Promise<T> {
    return this.afterSuccess(await this.#call(fn, write));
  }

  async #call<T>(fn: (redis: Redis) => Promise<T>, write = false): Promise<T> {
    try {
      return await fn(await this.#client());
    } catch (error) {
      throw this.#storeError(error, write);
    }
  }

  #storeError(error: unknown, write = false): SkeinError {
    return this.storeFailure(error, { server: `Redis store at ${this.redactedUrl}`, secret: this.#url, outcomeUnknown: write && !neverSent(error) });
  }

  async #client(): Promise<Redis> {
    let redis = this.#redis;
    if (!redis) {
      redis =
        this.options.client ??
        new Redis(this.#url, {
          lazyConnect: true,
          connectTimeout: this.options.connectTimeoutMs ?? 5000,
          maxRetriesPerRequest: 1,
          commandTimeout: this.options.commandTimeoutMs ?? 30_000,
          // A command sent before a connection drop may already have run: resending an append
          // after reconnecting would report the instance's own landed turn as a conflict (and
          // the documented retry would then duplicate it). Fail it with a StoreError instead.
          autoResendUnfulfilledCommands: false,
          // No background reconnects: a dropped connection fails the commands in flight at once
          // (ioredis would otherwise hold them, unanswered, with autoResend off); the next call
          // connects again. A down server thus fails each call with a typed error.
          retryStrategy: () => null,
        });
      // Failures reach callers through their commands; without a listener ioredis logs them.
      redis.on('error', () => {});
      redis.defineCommand('skeinAppend', { numberOfKeys: 2, lua: APPEND_SCRIPT });
      redis.defineCommand('skeinFork', { numberOfKeys: 3, lua: FORK_SCRIPT });
      this.#redis = redis;
    }
    if (redis.status === 'wait' || redis.status === 'end' || redis.status === 'close') {
      this.#connecting ??= this.#connect(redis).finally(() => (this.#connecting = undefined));
      await this.#connecting;
    } else if (this.#connecting) {
      await this.#connecting;
    }
    return redis;
  }

  /**
   * ioredis' connectTimeout ends at the TCP handshake; a server that accepts but never answers
   * (hung, or a proxy whose backend is gone) would hold AUTH and the ready check forever.
   */
  async #connect(redis: Redis): Promise<void> {
    const ms = this.options.connectTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        redis.disconnect();
        reject(new NotConnectedError(`no answer from the server within ${ms} ms (connectTimeoutMs)`));
      }, ms);
    });
    // The reason a connection failed (e.g. WRONGPASS) comes as an 'error' event; connect() itself
    // only reports that the connection closed.
    let reason: unknown;
    const onError = (error: unknown) => (reason = error);
    redis.on('error', onError);
    try {
      await Promise.race([redis.connect(), timeout]);
    } catch (error) {
      throw error instanceof NotConnectedError ? error : (reason ?? error);
    } finally {
      clearTimeout(timer);
      redis.off('error', onError);
    }
  }
}

/** One thread's history in Redis: the commands of a version-checked store. */
export class RedisChatMessageStore extends VersionedChatMessageStore<RedisChatMessageStore, RedisChatMessageStoreFactory> {
  readonly type = REDIS_STORE_ID;

  protected override get storage(): string {
    return 'the key';
  }

  protected async readTail(last: number | undefined): Promise<StoredTail> {
    const f = this.factory;
    const [version, bodies] = await f.run(async (redis) => {
      if (last === 0) return [await redis.get(f.versionKey(this.key)), [] as string[]] as const;
      // MULTI: the version and the messages are of the same moment.
      const replies = await redis
        .multi()
        .get(f.versionKey(this.key))
        .lrange(f.listKey(this.key), last === undefined ? 0 : -last, -1)
        .exec();
      if (!replies) throw new StoreError(REDIS_STORE_ID, 'Redis aborted the read transaction; try again.');
      for (const [error] of replies) if (error) throw error;
      return [replies[0]![1] as string | null, replies[1]![1] as string[]] as const;
    });
    return { version: Number(version ?? 0), rows: bodies.map((body, i) => ({ body, at: `[${i}]` })) };
  }

  protected async appendBodies(bodies: readonly string[], expected: number): Promise<AppendOutcome> {
    const f = this.factory;
    const [ok, version] = await f.run((redis) =>
      f.append(redis, f.listKey(this.key), f.versionKey(this.key), String(expected), String(f.options.maxMessages ?? 0), String(f.options.ttlSeconds ?? 0), ...bodies),
    true);
    return { appended: Number(ok) === 1, version: Number(version) };
  }

  protected async copyFirst(count: number, to: string): Promise<number> {
    // One script; LRANGE 0 -1 would be everything, so the base never asks for 0.
    return Number(await this.factory.run((redis) => this.factory.forkCommand(redis, this.key, to, count)));
  }

  protected async deleteThread(): Promise<void> {
    await this.factory.run((redis) => redis.del(this.factory.listKey(this.key), this.factory.versionKey(this.key)));
  }

  protected open(key: string, version: number): RedisChatMessageStore {
    return new RedisChatMessageStore(this.factory, key, version);
  }
}

/** Said when an append failed after it may have reached the server. */
export const UNKNOWN_OUTCOME = UNKNOWN_APPEND_OUTCOME;

class NotConnectedError extends Error {}

const PERSISTENCE_SETTINGS = ['appendonly', 'appendfsync', 'save'] as const;
const TURN_OFF = 'If this is intended, pass `durabilityCheck: false` to the Redis store to skip this check.';
const FIX = 'To keep every acknowledged turn, run Redis with `appendonly yes` and `appendfsync always` (in redis.conf, or `CONFIG SET appendonly yes` then `CONFIG SET appendfsync always` and `CONFIG REWRITE`).';

/** What the persistence settings expose an acknowledged turn to; undefined when nothing (AOF, fsync at every write). */
export function redisPersistenceWarning(server: string, settings: Readonly<Record<string, string>>): string | undefined {
  const aof = settings.appendonly === 'yes';
  const fsync = settings.appendfsync ?? '';
  if (aof && fsync === 'always') return undefined;
  const save = (settings.save ?? '').trim();
  const risk = !aof
    ? save === ''
      ? 'keeps threads only in memory (appendonly no, and no RDB snapshots: save ""), so every stored turn is lost when the Redis server restarts or crashes'
      : `persists only RDB snapshots (appendonly no, save "${save}"), so the turns acknowledged since the last snapshot are lost if the Redis server crashes or the machine loses power`
    : fsync === 'everysec'
      ? 'syncs its append-only file to disk once a second (appendfsync everysec), so the turns acknowledged in the last second or so are lost if the machine crashes or loses power (a crash of the Redis process alone loses nothing)'
      : `leaves syncing its append-only file to the operating system (appendfsync ${fsync || 'unknown'}), so the turns acknowledged in the last 30 seconds or so are lost if the machine crashes or loses power`;
  return `Skein Redis store at ${server}: the server ${risk}. ${FIX} ${TURN_OFF}`;
}

function redisUncheckedWarning(server: string, reason: string): string {
  return (
    `Skein Redis store at ${server}: could not read the server's persistence settings (CONFIG GET was refused: ${reason}), so it cannot tell ` +
    'whether acknowledged turns survive a Redis restart, a crash or a power loss. Check that the server (or your managed service\'s ' +
    'persistence setting) keeps an append-only file synced at every write (`appendonly yes`, `appendfsync always`), then pass ' +
    '`durabilityCheck: false` to the Redis store to skip this check.'
  );
}

/** Failures that prove the command never reached Redis (or Redis refused it): nothing was written. */
function neverSent(error: unknown): boolean {
  if (error instanceof NotConnectedError) return true;
  const { name, code } = error as { name?: string; code?: string };
  return name === 'ReplyError' || name === 'MaxRetriesPerRequestError' || code === 'ECONNREFUSED' || code === 'ENOTFOUND';
}




