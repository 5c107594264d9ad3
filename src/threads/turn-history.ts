import type { ChatMessage } from '../messages/chat-message.js';
import type { ChatMessageStore } from './chat-message-store.js';

/**
 * A store's read for the agent's own turn, where messages are only read (Skein never changes a
 * stored message): a store that has one may hand out the message objects it keeps for that,
 * where `listMessages` gives every caller objects of its own. Not part of the public API.
 */
export const turnHistoryRead = Symbol('skein.turnHistoryRead');

interface TurnHistoryReader {
  [turnHistoryRead]?: () => ChatMessage[];
}

/** The history a turn sends: the store's turn read when it has one, else `listMessages()`. */
export function readTurnHistory(store: ChatMessageStore): ChatMessage[] | Promise<ChatMessage[]> {
  const read = (store as TurnHistoryReader)[turnHistoryRead];
  return read === undefined ? store.listMessages() : read.call(store);
}
