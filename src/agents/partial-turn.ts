import type { ChatResponseUpdate } from '../clients/chat-response.js';
import type { ChatMessage } from '../messages/chat-message.js';
import { isText } from '../messages/content.js';

/**
 * What a turn produced before it failed, for `keepPartial`: the model replies and tool results
 * that completed, plus the text streamed by the model call in flight.
 */
export class PartialTurn {
  readonly #completed: ChatMessage[] = [];
  #inFlight = '';

  /** A streamed update of the model call in flight. */
  readonly onUpdate = (update: ChatResponseUpdate): void => {
    if ((update.role ?? 'assistant') !== 'assistant') return;
    for (const c of update.contents) if (isText(c)) this.#inFlight += c.text;
  };

  /** A model reply or a tool-result message completed; the call in flight is over. */
  completed(messages: readonly ChatMessage[]): void {
    this.#completed.push(...messages);
    this.#inFlight = '';
  }

  /**
   * The messages to record: completed ones without calls that never got a result (and without
   * messages left empty by that), then the in-flight text; the last assistant message with text
   * is marked `partial`. Undefined when no assistant text arrived, so nothing is worth keeping.
   */
  messages(authorName: string | undefined): ChatMessage[] | undefined {
    const answered = new Set<string>();
    for (const m of this.#completed) for (const c of m.contents) if (c.kind === 'function-result') answered.add(c.callId);
    const kept: ChatMessage[] = [];
    for (const m of this.#completed) {
      const contents = m.contents.filter((c) => c.kind !== 'function-call' || answered.has(c.callId));
      if (contents.some((c) => c.kind !== 'usage')) kept.push(contents.length === m.contents.length ? m : { ...m, contents });
    }
    if (this.#inFlight) {
      const message: ChatMessage = { role: 'assistant', contents: [{ kind: 'text', text: this.#inFlight }], createdAt: new Date().toISOString() };
      if (authorName !== undefined) message.authorName = authorName;
      kept.push(message);
    }
    let last = -1;
    kept.forEach((m, i) => {
      if (m.role === 'assistant' && m.contents.some((c) => isText(c) && c.text !== '')) last = i;
    });
    if (last < 0) return undefined;
    kept[last] = { ...kept[last]!, additionalProperties: { ...kept[last]!.additionalProperties, partial: true } };
    return kept;
  }
}
