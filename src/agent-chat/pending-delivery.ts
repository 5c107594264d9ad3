import { type ChatMessage, messageText } from '../messages/chat-message.js';

/**
 * How many of a channel's waiting messages (counted from the oldest) a service thread already
 * holds after a turn that did not finish.
 *
 * A service takes a turn's input with the run (Assistants and Foundry `additional_messages`,
 * a Responses request), so a turn that fails or is aborted after the request reached the
 * service leaves its input on the thread even though the caller saw an error; a turn that failed
 * earlier left nothing. Only the thread can tell which, so after such a turn the channel reads it
 * and drops what arrived before it sends the rest.
 *
 * The search is limited to what follows the newest message the channel knew was there
 * (`known`: ids of the messages its last committed turn produced, or of the newest message it
 * last read). Below that point everything is older history. The unfinished run's own replies
 * (assistant messages) follow its input and are skipped. What is left must end with the first
 * waiting messages, in order, with the same text: the delivered prefix. System messages never
 * become thread messages (they go as run instructions), so they are not looked for; one that sat
 * among delivered messages went with them.
 */
export function deliveredCount(history: readonly ChatMessage[], pending: readonly ChatMessage[], known: readonly string[]): number {
  const arrived = arrivedSince(history, known);
  const sent: number[] = [];
  pending.forEach((m, i) => {
    if (m.role !== 'system') sent.push(i);
  });
  for (let k = Math.min(sent.length, arrived.length); k > 0; k--) {
    const tail = arrived.slice(arrived.length - k);
    if (tail.every((m, i) => messageText(m) === messageText(pending[sent[i]!]!))) return sent[k - 1]! + 1;
  }
  return 0;
}

/** The user messages after the newest known message, without the unfinished run's trailing replies. */
function arrivedSince(history: readonly ChatMessage[], known: readonly string[]): ChatMessage[] {
  let start = 0;
  if (known.length > 0) {
    for (let i = history.length - 1; i >= 0; i--) {
      const id = history[i]!.messageId;
      if (id !== undefined && known.includes(id)) {
        start = i + 1;
        break;
      }
    }
  }
  let end = history.length;
  while (end > start && history[end - 1]!.role === 'assistant') end--;
  return history.slice(start, end);
}

/** The service ids among a committed turn's messages (some are local, e.g. tool results). */
export function idsOf(messages: readonly ChatMessage[]): string[] {
  return messages.flatMap((m) => (m.messageId === undefined ? [] : [m.messageId]));
}

/** The id to search from after reading the thread: its newest message's. */
export function newestIds(messages: readonly ChatMessage[]): string[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const id = messages[i]!.messageId;
    if (id !== undefined) return [id];
  }
  return [];
}
