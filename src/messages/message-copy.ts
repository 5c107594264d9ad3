import type { ChatMessage } from './chat-message.js';

/**
 * `{ ...message, [key]: value }` for a key the message lacks, built by copying. On Node 20 an
 * optimized spread that adds a property can give every result its own hidden class (~230 bytes
 * per stored message, see docs/performance.md, round 6) and took 5x–10x the time of this copy
 * in a micro-benchmark (round 8); copies made this way share one hidden class per shape.
 */
export function withField<K extends 'authorName' | 'createdAt'>(message: ChatMessage, key: K, value: ChatMessage[K]): ChatMessage {
  const keys = Object.keys(message);
  // Every model reply takes this path (role, contents, messageId; stamped, then authored): as
  // literals, all fields sit in the object itself. A copy into `{}` has room for four in the
  // object; a fifth (authorName) allocates a separate property store for every stored reply.
  if (keys.length === 3 && key === 'createdAt' && keys[0] === 'role' && keys[1] === 'contents' && keys[2] === 'messageId') {
    return { role: message.role, contents: message.contents, messageId: message.messageId, createdAt: value as string };
  }
  if (keys.length === 4 && key === 'authorName' && keys[0] === 'role' && keys[1] === 'contents' && keys[2] === 'messageId' && keys[3] === 'createdAt') {
    return { role: message.role, contents: message.contents, messageId: message.messageId, createdAt: message.createdAt, authorName: value as string };
  }
  const copy = {} as Record<string, unknown>;
  for (const k of keys) copy[k] = message[k as keyof ChatMessage];
  copy[key] = value;
  return copy as unknown as ChatMessage;
}
