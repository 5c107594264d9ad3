import { randomUUID } from 'node:crypto';
import { SkeinError, StoreError } from '../errors/skein-error.js';
import { scrubbedCause, scrubSecrets } from '../errors/secret-scrubbing.js';
import { defaultSerializationRegistry, type SerializationRegistry } from '../serialization/serialization-registry.js';
import type { ChatMessageStore, ChatMessageStoreFactory, StoreRestoreContext } from './chat-message-store.js';
import type { ChatReducer } from './chat-reducer.js';
import type { JsonObject } from '../serialization/json.js';
import { checkRetentionOptions, DurabilityCheckOnce, type StoreDurabilityReport, UNKNOWN_APPEND_OUTCOME } from './store-support.js';
import { processWarningStoreLogger, type StoreLogger } from './store-logger.js';

/** The options every database store takes. */
export interface VersionedStoreOptions {
  /** Keep only the newest N messages of each thread (trimmed on append). */
  maxMessages?: number;
  /** How long a thread lives after its last write (natively or through `prune()`, per store). */
  ttlSeconds?: number;
  /** Applied to every history read (`listMessages`); the stored messages are unchanged. */
  reducer?: ChatReducer;
  /** Validates messages read back; by default the container's registry (or the core kinds). */
  serializationRegistry?: SerializationRegistry;
}

/**
 * What the factories of every database store share: the version of their serialized state, the
 * checked retention options, the registry messages are read back with, and new stores under
 * fresh keys. A subclass connects, restores and says how to make a store for a key.
 */
export abstract class VersionedStoreFactory<S extends ChatMessageStore, O extends VersionedStoreOptions> implements ChatMessageStoreFactory {
  abstract readonly type: string;
  readonly version = 1;
  /** The options given (as safe to log: a store masks any password in them). */
  readonly options: Readonly<O>;
  serializationRegistry: SerializationRegistry;

  /**
   * `shown` is what `options` exposes (the given options with secrets masked); `ttl` is what
   * `ttlSeconds` may be (whole seconds where the backend expires keys itself).
   */
  constructor(storeId: string, options: O, shown: O = options, ttl: 'integer' | 'number' = 'number') {
    checkRetentionOptions(storeId, options, ttl);
    this.options = { ...shown };
    this.serializationRegistry = options.serializationRegistry ?? defaultSerializationRegistry();
  }

  create(): S {
    return this.storeFor(randomUUID(), 0);
  }

  abstract restore(state: JsonObject, context: StoreRestoreContext): S | Promise<S>;

  /** @internal A store of this factory for thread `key`, last seen at `version`. */
  abstract storeFor(key: string, version: number): S;
}

/** The options of a store on a database server, which may be set up to lose acknowledged writes. */
export interface ServerStoreOptions extends VersionedStoreOptions {
  /** Read the server's durability settings after the first successful call and warn once when acknowledged turns could be lost. Default true. */
  durabilityCheck?: boolean;
  /** Where warnings go; default: the container's bound StoreLogger, else a Node process warning. */
  logger?: StoreLogger;
}

/**
 * A database store on a server (Redis, PostgreSQL): besides the shared factory, it checks once,
 * after its first successful call, that the server keeps what it acknowledges, and warns through
 * its logger if not.
 */
export abstract class ServerStoreFactory<S extends ChatMessageStore, O extends ServerStoreOptions> extends VersionedStoreFactory<S, O> {
  /** Where this factory's warnings go (the `logger` option, the container's StoreLogger, or a process warning). */
  logger: StoreLogger;
  readonly #durability = new DurabilityCheckOnce(
    () => this.checkDurability(),
    () => this.logger,
  );

  constructor(storeId: string, options: O, shown: O, ttl: 'integer' | 'number' = 'number') {
    super(storeId, options, shown, ttl);
    this.logger = options.logger ?? processWarningStoreLogger;
  }

  /** Reads the server's durability settings and says what an acknowledged turn is exposed to. */
  abstract checkDurability(): Promise<StoreDurabilityReport>;

  /**
   * A driver failure as a StoreError that names the server (`<what> at <address>`, password
   * masked) and never carries the password `secret` holds; `outcomeUnknown` when it failed an
   * append that may have reached the server, which the message then says. SkeinErrors pass through.
   */
  protected storeFailure(error: unknown, failure: { server: string; secret: string; hint?: string; outcomeUnknown?: boolean }): SkeinError {
    if (error instanceof SkeinError) return error;
    const raw = error instanceof Error ? error.message : String(error);
    const unknown = failure.outcomeUnknown ? ` ${UNKNOWN_APPEND_OUTCOME}` : '';
    return new StoreError(this.type, `${failure.server} failed: ${scrubSecrets(raw, failure.secret)}${failure.hint ?? ''}${unknown}`, {
      cause: scrubbedCause(error, failure.secret),
    });
  }

  /** Call with the result of each successful store call: runs the durability check once (unless turned off), then returns the result. */
  protected async afterSuccess<T>(result: T): Promise<T> {
    if (this.options.durabilityCheck !== false) await this.#durability.afterSuccess();
    return result;
  }
}
