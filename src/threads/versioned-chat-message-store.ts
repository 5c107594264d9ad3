import { randomUUID } from 'node:crypto';
import { SerializationError } from '../errors/skein-error.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { JsonObject } from '../serialization/json.js';
import type { SerializationRegistry } from '../serialization/serialization-registry.js';
import type { ChatMessageStore, ListMessagesOptions } from './chat-message-store.js';
import type { ChatReducer } from './chat-reducer.js';
import { storeConflictError } from './store-support.js';

/** A stored message as the database returns it: its JSON, and where it sits (for error paths). */
export interface StoredMessageRow {
  readonly body: string;
  /** How the row is named after `<type>:<key>` in an error path, e.g. `#12` (a sequence number) or `[0]` (an index). */
  readonly at: string;
}

/** A thread's version and its newest messages (oldest first), read at one moment. */
export interface StoredTail {
  readonly version: number;
  readonly rows: readonly StoredMessageRow[];
}

/**
 * What a version-checked append did: wrote the turn (`version` is the thread's new version), or
 * wrote nothing because another instance appended first (`version` is the one it found).
 */
export interface AppendOutcome {
  readonly appended: boolean;
  readonly version: number;
}

/** What the stores of a database read from their factory. */
export interface VersionedStoreSettings<S> {
  readonly serializationRegistry: SerializationRegistry;
  readonly options: { readonly reducer?: ChatReducer };
  /** A store of the same factory for thread `key`, last seen at `version`. */
  storeFor(key: string, version: number): S;
}

/**
 * What every database store (SQLite, Redis, PostgreSQL, or yours) does the same way: a thread is
 * a key plus a version (messages ever appended); each instance remembers the version it last saw
 * and appends a turn only if the thread is still at it (else `ThreadConflictError`, nothing
 * written); messages are stored as their JSON and checked by the registry when read back; the
 * serialized state is the key alone. A subclass supplies only its statements and driver calls.
 */
export abstract class VersionedChatMessageStore<S extends VersionedChatMessageStore<S, F>, F extends VersionedStoreSettings<S>> implements ChatMessageStore {
  abstract readonly type: string;
  /** @internal The thread version (messages ever appended) this instance last read or wrote. */
  seenVersion: number;

  constructor(
    /** The factory that made this store: its connection, registry and options. */
    protected readonly factory: F,
    readonly key: string,
    version: number,
  ) {
    this.seenVersion = version;
  }

  async listMessages(options: ListMessagesOptions = {}): Promise<ChatMessage[]> {
    const last = options.last === undefined ? undefined : Math.max(0, Math.floor(options.last));
    const tail = await this.readTail(last);
    this.seenVersion = tail.version;
    const messages = tail.rows.map((row) => this.#read(row));
    const reducer = this.factory.options.reducer;
    return reducer ? reducer.reduce(messages) : messages;
  }

  async addMessages(messages: readonly ChatMessage[]): Promise<void> {
    if (messages.length === 0) return;
    // Serialize first: a message that cannot be stored fails the turn before anything is sent.
    const bodies = messages.map((m) => JSON.stringify(m));
    const expected = this.seenVersion;
    const outcome = await this.appendBodies(bodies, expected);
    if (!outcome.appended) throw storeConflictError(this.key, expected, outcome.version);
    this.seenVersion = outcome.version;
  }

  async serialize(): Promise<JsonObject> {
    return { key: this.key };
  }

  /** A new thread (a new key) with a copy of the first `count` messages, in one round trip; this one is unchanged. */
  async fork(count: number): Promise<S> {
    const key = randomUUID();
    const limit = Math.max(0, Math.floor(count));
    // An empty fork writes nothing at all.
    const copied = limit === 0 ? 0 : await this.copyFirst(limit, key);
    return this.factory.storeFor(key, copied);
  }

  async clear(): Promise<void> {
    await this.deleteThread();
    this.seenVersion = 0;
  }

  /** What was changed outside skein when a stored row is not JSON. */
  protected get storage(): string {
    return 'the database';
  }
  /** The version and the newest `last` messages (all when undefined; none, but the version, when 0), of one moment. */
  protected abstract readTail(last: number | undefined): Promise<StoredTail>;
  /** Appends the turn atomically if the thread is at `expected`, trimming to `maxMessages` and refreshing any TTL. */
  protected abstract appendBodies(bodies: readonly string[], expected: number): Promise<AppendOutcome>;
  /** Copies the first `count` (> 0) messages to a new thread `to` atomically; returns how many were copied (its version). */
  protected abstract copyFirst(count: number, to: string): Promise<number>;
  /** Removes the thread and its messages. */
  protected abstract deleteThread(): Promise<void>;

  #read(row: StoredMessageRow): ChatMessage {
    const path = `${this.type}:${this.key}${row.at}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(row.body);
    } catch (error) {
      throw new SerializationError(path, `stored message is not valid JSON; ${this.storage} was changed outside skein.`, { cause: error });
    }
    return this.factory.serializationRegistry.readMessage(parsed, path);
  }
}
