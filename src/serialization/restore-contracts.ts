import type { ChatMessage } from '../messages/chat-message.js';
import type { AgentThread, SerializedThread } from '../threads/agent-thread.js';
import type { ChatMessageStore } from '../threads/chat-message-store-contract.js';
import type { ContentKindSerializer } from './content-kind-serializer.js';
import type { JsonObject } from './json.js';
import type { SerializationLimits } from './untrusted-json.js';

// The contracts of reading serialized state back. The registry reads threads through thread
// serializers, which reconnect stores through store factories, which are handed the registry:
// they refer to each other, so they are declared together here, below both the registry's
// implementation and the threads (serialization-registry.ts, thread-serializer.ts and
// threads/chat-message-store.ts re-export them where they were).

/**
 * The discriminator registry: maps a thread `$type` to its ThreadSerializer and a content `kind`
 * to its ContentKindSerializer. Every discriminator is checked here before anything else reads
 * the data, and every input is treated as untrusted.
 */
export const SerializationRegistry = Symbol('SerializationRegistry');
export interface SerializationRegistry {
  readonly limits: SerializationLimits;
  registerThreadSerializer(serializer: ThreadSerializer): void;
  registerContentKind(serializer: ContentKindSerializer): void;
  threadTypes(): string[];
  /**
   * Declares the `$type`s (and versions) of another kind of discriminated state — group chats,
   * their channels, a plugin's own — so it is checked here like threads are.
   */
  registerStateType(kind: string, type: string, versions: readonly number[]): void;
  /** Checks a `kind` of state's `$type` and `version` against the declared ones (SerializationError at `path`). */
  checkStateType(kind: string, type: unknown, version: unknown, path: string): void;
  /** Reads a serialized thread (untrusted) back into an AgentThread. */
  readThread(input: unknown, context?: Omit<ThreadReadContext, 'registry'>): Promise<AgentThread>;
  /** Reads a message array whose JSON was already checked by `assertUntrustedJson`. */
  readMessages(input: unknown, path: string): ChatMessage[];
  /** Checks and reads one untrusted message. */
  readMessage(input: unknown, path?: string): ChatMessage;
}

export interface ThreadReadContext {
  registry: SerializationRegistry;
  /** The deserializing agent's own store factory, used when `$type` names its store. */
  messageStoreFactory?: ChatMessageStoreFactory;
}

/**
 * Reads threads of one `$type` back. The envelope (`$type`, `version`, `provider`, `agent`,
 * `state`) was already checked by the registry; a serializer checks its own fields.
 */
export const ThreadSerializer = Symbol('ThreadSerializer');
export interface ThreadSerializer {
  readonly type: string;
  /** The versions this serializer reads. */
  readonly versions: readonly number[];
  deserialize(serialized: SerializedThread, context: ThreadReadContext): AgentThread | Promise<AgentThread>;
}

export interface StoreCreateContext {
  provider: string;
  agent?: string;
}

export interface StoreRestoreContext {
  /** Path of the store state in the serialized thread, for error messages. */
  path: string;
  /** The version the state was written with. */
  version: number;
  registry: SerializationRegistry;
}

/**
 * Makes stores for new threads and reconnects stores from serialized state. A plugin binds one
 * named by its id; an agent names it in config as `messageStore: '<id>'`.
 */
export const ChatMessageStoreFactory = Symbol('ChatMessageStoreFactory');
export interface ChatMessageStoreFactory {
  readonly type: string;
  /** The version `serialize()` writes; `restore` is given the version that was read. */
  readonly version: number;
  create(context: StoreCreateContext): ChatMessageStore;
  /** Validates untrusted `state` (throwing SerializationError with a path) and reconnects. */
  restore(state: JsonObject, context: StoreRestoreContext): ChatMessageStore | Promise<ChatMessageStore>;
}
