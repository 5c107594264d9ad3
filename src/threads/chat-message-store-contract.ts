import type { ChatMessage } from '../messages/chat-message.js';
import type { JsonObject } from '../serialization/json.js';

export interface ListMessagesOptions {
  /** Only the last N messages (in order). Stores read them without reading the whole history. */
  last?: number;
}

/**
 * Where a Skein-managed thread keeps its messages. `addMessages` is one turn: all of its messages
 * land together, in order, or none do.
 */
export const ChatMessageStore = Symbol('ChatMessageStore');
export interface ChatMessageStore {
  /** The discriminator of this store's serialized state, e.g. `in-memory`, `sqlite`. */
  readonly type: string;
  listMessages(options?: ListMessagesOptions): Promise<ChatMessage[]>;
  addMessages(messages: readonly ChatMessage[]): Promise<void>;
  /** The store's own state: its messages for an in-memory store, its key for a database. JSON only, no secrets. */
  serialize(): Promise<JsonObject>;
  clear(): Promise<void>;
  /**
   * Optional: a new, independent thread (a new key) holding a copy of the first `count` messages
   * of this one, as `listMessages()` returns them (oldest first), made in one round trip. This
   * store is not changed. Stores without it are forked by `agent.forkThread` through the
   * contract: a new store from the factory and one `addMessages` with the copied messages.
   */
  fork?(count: number): Promise<ChatMessageStore>;
}
