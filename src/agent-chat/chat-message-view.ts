import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import { type ChatResponseUpdate, responseFromUpdates } from '../clients/chat-response.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { AIContent } from '../messages/content.js';

/**
 * What other agents may see of a turn: user and assistant messages with text, text only.
 * Tool calls and results stay in the channel that made them: another service could not
 * match them to its own calls.
 */
export function shareableMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role !== 'user' && m.role !== 'assistant') continue;
    const contents = m.contents.filter((c) => c.kind === 'text' && c.text !== '');
    if (contents.length === 0) continue;
    out.push(contents.length === m.contents.length ? m : { ...m, contents });
  }
  return out;
}

/**
 * The conversation as `agentName` sees it. Another agent's reply is input to this agent, so it
 * becomes a user message (author kept in `authorName`): a model shown someone else's words as
 * its own assistant turns takes them for things it said. Another agent's tool calls and
 * results are dropped; they mean nothing to this agent's service.
 */
export function viewFor(agentName: string | undefined, messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let callsBelongToMe = false;
  for (const m of messages) {
    if (m.role === 'tool') {
      if (callsBelongToMe) out.push(m);
      continue;
    }
    if (m.role !== 'assistant' || m.authorName === agentName) {
      if (m.role === 'assistant') callsBelongToMe = true;
      out.push(m);
      continue;
    }
    callsBelongToMe = false;
    const text = shareableMessages([m]);
    if (text.length) out.push({ ...text[0]!, role: 'user' });
  }
  return out;
}

/** Folds one agent's streamed updates into its messages, authored by it. */
export function messagesFromUpdates(updates: readonly AgentRunResponseUpdate[], agentName: string | undefined): ChatMessage[] {
  const folded = responseFromUpdates(updates.map(toChatUpdate)).messages;
  const now = new Date().toISOString();
  return folded.map((m) => {
    const out: ChatMessage = { ...m, createdAt: m.createdAt ?? now };
    if (m.role === 'assistant' && agentName !== undefined) out.authorName = agentName;
    return out;
  });
}

function toChatUpdate(update: AgentRunResponseUpdate): ChatResponseUpdate {
  const out: ChatResponseUpdate = { contents: update.contents };
  if (update.role) out.role = update.role;
  if (update.messageId) out.messageId = update.messageId;
  if (update.responseId) out.responseId = update.responseId;
  return out;
}

/** Stamps the author on replies that lack one. */
export function authoredBy(agentName: string | undefined, messages: readonly ChatMessage[]): ChatMessage[] {
  if (agentName === undefined) return [...messages];
  return messages.map((m) => (m.role === 'assistant' && m.authorName === undefined ? { ...m, authorName: agentName } : m));
}

/**
 * A user message that names its author in its text, `[writer]: Nice to meet you`, for services
 * whose messages have no author field (Responses input, Assistants and Foundry thread messages):
 * without it another agent's words reach the model as the human's. Messages without an
 * `authorName` (the human, usually) and non-user messages come back unchanged. The prefix goes on
 * the first text part (or is the first part when there is none). `readAttribution` undoes it.
 */
export function withAttribution(message: ChatMessage): ChatMessage {
  const name = message.role === 'user' ? message.authorName?.replace(/[\]\r\n]+/g, ' ').trim() : undefined;
  if (!name) return message;
  const prefix = `[${name}]: `;
  const first = message.contents.findIndex((c) => c.kind === 'text');
  const contents: AIContent[] =
    first < 0
      ? [{ kind: 'text', text: prefix.trimEnd() }, ...message.contents]
      : message.contents.map((c, i) => (i === first && c.kind === 'text' ? { ...c, text: prefix + c.text } : c));
  return { ...message, contents };
}

const ATTRIBUTION = /^\[([^\]\r\n]+)\]: /;

/** A user message's text as `withAttribution` wrote it -> its author and its own text. */
export function readAttribution(text: string): { authorName?: string; text: string } {
  const match = ATTRIBUTION.exec(text);
  return match ? { authorName: match[1]!, text: text.slice(match[0].length) } : { text };
}

/** A user message read back from a service: the attribution prefix becomes `authorName` again. */
export function withoutAttribution(message: ChatMessage): ChatMessage {
  if (message.role !== 'user' || message.authorName !== undefined) return message;
  const first = message.contents.findIndex((c) => c.kind === 'text');
  if (first < 0) return message;
  const { authorName, text } = readAttribution((message.contents[first] as { text: string }).text);
  if (authorName === undefined) return message;
  const contents = message.contents.map((c, i) => (i === first && c.kind === 'text' ? { ...c, text } : c));
  return { ...message, authorName, contents };
}
