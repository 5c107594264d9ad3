import type { ChatMessage, ChatRole } from '../messages/chat-message.js';

/**
 * How the in-memory store holds a message that is one text and only the usual fields: one
 * object instead of three (the message, its contents array and the text content), about 85
 * bytes less per idle message on Node 20, where an idle thread is otherwise mostly object
 * headers. Unpacking on read costs a few small objects per message, which a turn already
 * makes when it maps the history for the model.
 */
class PackedText {
  constructor(
    readonly role: ChatRole,
    readonly text: string,
    readonly createdAt: string | undefined,
    readonly messageId: string | undefined,
    readonly authorName: string | undefined,
  ) {}
}

export type StoredMessage = ChatMessage | PackedText;

/** The fields a packed message may have, in the order it must have them (so JSON round-trips byte for byte). */
const OPTIONAL_FIELDS = ['createdAt', 'messageId', 'authorName'] as const;

/** A packed form when the message round-trips exactly through it; otherwise the message itself. */
export function packMessage(message: ChatMessage): StoredMessage {
  const keys = Object.keys(message);
  if (keys[0] !== 'role' || keys[1] !== 'contents' || message.contents.length !== 1) return message;
  let from = 0;
  for (let i = 2; i < keys.length; i++) {
    const at = (OPTIONAL_FIELDS as readonly string[]).indexOf(keys[i]!, from);
    if (at < 0 || typeof message[keys[i] as (typeof OPTIONAL_FIELDS)[number]] !== 'string') return message;
    from = at + 1;
  }
  const content = message.contents[0]!;
  if (content.kind !== 'text' || typeof content.text !== 'string') return message;
  const contentKeys = Object.keys(content);
  if (contentKeys.length !== 2 || contentKeys[0] !== 'kind' || contentKeys[1] !== 'text') return message;
  return new PackedText(message.role, content.text, message.createdAt, message.messageId, message.authorName);
}

/** The message as it was added: same fields, same order. */
export function unpackMessage(stored: StoredMessage): ChatMessage {
  if (!(stored instanceof PackedText)) return stored;
  const { role, createdAt } = stored;
  const contents: ChatMessage['contents'] = [{ kind: 'text', text: stored.text }];
  // The usual shapes as one literal each (a user message with its time): a field added after the
  // literal goes to a separate property store, one more allocation per message on every read,
  // and gives the message another hidden class than the input it was stored from.
  if (stored.messageId === undefined && stored.authorName === undefined) return createdAt === undefined ? { role, contents } : { role, contents, createdAt };
  const message: ChatMessage = { role, contents };
  if (createdAt !== undefined) message.createdAt = createdAt;
  if (stored.messageId !== undefined) message.messageId = stored.messageId;
  if (stored.authorName !== undefined) message.authorName = stored.authorName;
  return message;
}
