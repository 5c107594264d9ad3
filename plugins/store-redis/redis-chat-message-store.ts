import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  type ChatMessage,
  type ChatMessageStore,
  type ChatMessageStoreFactory,
  type ChatReducer,
  type JsonObject,
  type ListMessagesOptions,
  SerializationError,
  type SerializationRegistry,
  SkeinError,
  type StoreRestoreContext,
  StoreError,
  ThreadConflictError,
  checkShape,
  defaultSerializationRegistry,
} from 'skein';

export const REDIS_STORE_ID = 'redis';

export interface RedisStoreOptions {
  /** `redis://[user:password@]host:port[/db]`; default `redis://127.0.0.1:6379`. The password never leaves the client. */
  url?: string;
  /** Use this ioredis client instead of connecting (the caller closes it). */
  client?: Redis;
  /** Prefix of every key this store writes. Default `skein:`. */
  keyPrefix?: string;
  /** Keep only the newest N messages of each thread (trimmed on append). */
  maxMessages?: number;
  /** Redis expires a thread this many seconds after its last append. */
  ttlSeconds?: number;
  /** Applied to every history read (`listMessages`); the stored messages are unchanged. */
  reducer?: ChatReducer;
  /** Validates messages read back; by default the container's registry (or the core kinds). */
  serializationRegistry?: SerializationRegistry;
  /** Connect timeout in ms. Default 5000. */
  connectTimeoutMs?: number;
}

const KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,200}$/;

/**
 * The append is one Lua script, so it runs atomically on the server: check the thread's version,
 * push the turn, bump the version, trim and set the TTL. A lost race writes nothing.
 */
const APPEND_SCRIPT = `
local actual = tonumber(redis.call('GET', KEYS[2]) or '0')
if actual ~= tonumber(ARGV[1]) then return {0, actual} end
local max = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local i = 4
while i <= #ARGV do
  local j = math.min(i + 999, #ARGV)
  redis.call('RPUSH', KEYS[1], unpack(ARGV, i, j))
  i = j + 1
end
local nextVersion = actual + #ARGV - 3
redis.call('SET', KEYS[2], nextVersion)
if max > 0 then redis.call('LTRIM', KEYS[1], -max, -1) end
if ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
return {1, nextVersion}
`;

type AppendCommand = (listKey: string, versionKey: string, ...args: string[]) => Promise<[number, number]>;

/**
 * Makes Redis-backed stores: a thread is a list of JSON messages plus a version counter (under
 * one hash tag, so it also works on a cluster); a serialized thread holds only its key.
 */
export class RedisChatMessageStoreFactory implements ChatMessageStoreFactory {
  readonly type = REDIS_STORE_ID;
  readonly version = 1;
  readonly options: Readonly<RedisStoreOptions>;
  serializationRegistry: SerializationRegistry;
  readonly #url: string;
  #redis: Redis | undefined;
  #connecting: Promise<void> | undefined;

  constructor(options: RedisStoreOptions = {}) {
    if (options.maxMessages !== undefined && !(Number.isInteger(options.maxMessages) && options.maxMessages > 0)) {
      throw new StoreError(REDIS_STORE_ID, `maxMessages must be a positive integer, found ${options.maxMessages}.`);
    }
    if (options.ttlSeconds !== undefined && !(Number.isInteger(options.ttlSeconds) && options.ttlSeconds > 0)) {
      throw new StoreError(REDIS_STORE_ID, `ttlSeconds must be a positive integer, found ${options.ttlSeconds}.`);
    }
    this.options = { ...options };
    this.#url = options.url ?? 'redis://127.0.0.1:6379';
    this.serializationRegistry = options.serializationRegistry ?? defaultSerializationRegistry();
  }

  /** The server address with any password masked: safe for logs and messages. */
  get redactedUrl(): string {
    return redact(this.#url);
  }

  create(): RedisChatMessageStore {
    return new RedisChatMessageStore(this, randomUUID(), 0);
  }

  async restore(state: JsonObject, context: StoreRestoreContext): Promise<RedisChatMessageStore> {
    const key = readKey(state, context.path);
    const store = new RedisChatMessageStore(this, key, 0);
    const version = await this.run(async (redis) => redis.get(this.versionKey(key)));
    store.seenVersion = Number(version ?? 0);
    return store;
  }

  /** Redis expires threads itself; nothing to prune. Returns 0. */
  async prune(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    const redis = this.#redis;
    this.#redis = undefined;
    if (redis && !this.options.client) await redis.quit().catch(() => redis.disconnect());
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

  /** @internal Runs commands on the (lazily connected) client, turning failures into StoreError. */
  async run<T>(fn: (redis: Redis) => Promise<T>): Promise<T> {
    try {
      return await fn(await this.#client());
    } catch (error) {
      if (error instanceof SkeinError) throw error;
      const message = scrub(error instanceof Error ? error.message : String(error), this.#url);
      throw new StoreError(REDIS_STORE_ID, `Redis store at ${this.redactedUrl} failed: ${message}`, { cause: scrubCause(error, this.#url) });
    }
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
          // Give up after a few quick attempts so a down server fails the call with a typed error;
          // the next call connects again.
          retryStrategy: (times) => (times > 3 ? null : times * 100),
        });
      // Failures reach callers through their commands; without a listener ioredis logs them.
      redis.on('error', () => {});
      redis.defineCommand('skeinAppend', { numberOfKeys: 2, lua: APPEND_SCRIPT });
      this.#redis = redis;
    }
    if (redis.status === 'wait' || redis.status === 'end' || redis.status === 'close') {
      this.#connecting ??= redis.connect().finally(() => (this.#connecting = undefined));
      await this.#connecting;
    } else if (this.#connecting) {
      await this.#connecting;
    }
    return redis;
  }
}

/** One thread's history in Redis. Remembers the version it last saw to guard its appends. */
export class RedisChatMessageStore implements ChatMessageStore {
  readonly type = REDIS_STORE_ID;
  /** @internal The thread version (messages ever appended) this instance last read or wrote. */
  seenVersion: number;

  constructor(
    private readonly factory: RedisChatMessageStoreFactory,
    readonly key: string,
    version: number,
  ) {
    this.seenVersion = version;
  }

  async listMessages(options: ListMessagesOptions = {}): Promise<ChatMessage[]> {
    const last = options.last === undefined ? undefined : Math.max(0, Math.floor(options.last));
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
    this.seenVersion = Number(version ?? 0);
    const messages = bodies.map((body, i) => this.#read(body, i));
    return f.options.reducer ? f.options.reducer.reduce(messages) : messages;
  }

  async addMessages(messages: readonly ChatMessage[]): Promise<void> {
    if (messages.length === 0) return;
    // Serialize first: a message that cannot be stored fails the turn before anything is sent.
    const bodies = messages.map((m) => JSON.stringify(m));
    const f = this.factory;
    const expected = this.seenVersion;
    const [ok, version] = await f.run((redis) =>
      f.append(redis, f.listKey(this.key), f.versionKey(this.key), String(expected), String(f.options.maxMessages ?? 0), String(f.options.ttlSeconds ?? 0), ...bodies),
    );
    if (Number(ok) !== 1) {
      throw new ThreadConflictError(
        `Thread ${this.key} changed since this instance read it (expected version ${expected}, found ${version}): another process appended a turn. ` +
          'Nothing of this turn was written; deserialize or reload the thread and run the turn again.',
        expected,
        Number(version),
      );
    }
    this.seenVersion = Number(version);
  }

  async serialize(): Promise<JsonObject> {
    return { key: this.key };
  }

  async clear(): Promise<void> {
    await this.factory.run((redis) => redis.del(this.factory.listKey(this.key), this.factory.versionKey(this.key)));
    this.seenVersion = 0;
  }

  #read(body: string, index: number): ChatMessage {
    const path = `redis:${this.key}[${index}]`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (error) {
      throw new SerializationError(path, 'stored message is not valid JSON; the key was changed outside skein.', { cause: error });
    }
    return this.factory.serializationRegistry.readMessage(parsed, path);
  }
}

function readKey(state: JsonObject, path: string): string {
  const key = checkShape(state, path, { required: { key: 'string' } }).key as string;
  if (!KEY_PATTERN.test(key)) throw new SerializationError(`${path}.key`, 'expected a store key of 1-200 letters, digits, "_", ".", ":" or "-".');
  return key;
}

/** The URL with its password replaced by `***`. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** Removes the URL's password (raw and URL-decoded) from a message. */
export function scrub(text: string, url: string): string {
  let password = '';
  try {
    password = new URL(url).password;
  } catch {
    return text;
  }
  if (!password) return text;
  let out = text.split(password).join('***');
  const decoded = decodeURIComponent(password);
  if (decoded) out = out.split(decoded).join('***');
  return out;
}

function scrubCause(error: unknown, url: string): unknown {
  if (!(error instanceof Error)) return error;
  const clean = scrub(error.message, url);
  return clean === error.message ? error : new Error(clean);
}
