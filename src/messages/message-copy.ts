import type { ChatMessage } from './chat-message.js';

/**
 * `{ ...message, [key]: value }` for a key the message lacks, built by copying. On Node 20 an
 * optimized spread that adds a property can give every result its own hidden class (~230 bytes
 * per stored message, see docs/performance.md, round 6) and took 5x–10x the time of this copy
 * in a micro-benchmark (round 8); copies made this way share one hidden class per shape.
 */
export function withField<K extends 'authorName' | 'createdAt'>(message: ChatMessage, key: K, value: ChatMessage[K]): ChatMessage {
  const copy = {} as Record<string, unknown>;
  for (const k of Object.keys(message)) copy[k] = message[k as keyof ChatMessage];
  copy[key] = value;
  return copy as unknown as ChatMessage;
}
