import type { AgentThread, SerializedThread } from '../threads/agent-thread.js';
import type { ChatMessageStoreFactory } from '../threads/chat-message-store.js';
import type { SerializationRegistry } from './serialization-registry.js';

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
