import type { AgentRunResponseUpdate, ChatMessage } from 'skein';

/** The key of a run's durable stream of updates. */
export const UPDATES_STREAM = 'skein.updates';

/** One completed message as a run update (text, contents, role, author). */
export function toStreamUpdate(message: ChatMessage): AgentRunResponseUpdate {
  let text = '';
  for (const c of message.contents) if (c.kind === 'text') text += c.text;
  const update: AgentRunResponseUpdate = { text, contents: message.contents, role: message.role };
  if (message.authorName !== undefined) update.authorName = message.authorName;
  if (message.messageId !== undefined) update.messageId = message.messageId;
  return update;
}
