import type { JsonObject } from '../serialization/json.js';
import { type AIContent, type FunctionApprovalResponseContent, type FunctionCallContent, isFunctionCall, isFunctionResult, isText } from './content.js';

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';
export const CHAT_ROLES: readonly ChatRole[] = ['system', 'user', 'assistant', 'tool'];

/**
 * One message of a conversation. Plain JSON data: Skein never mutates a message after it was
 * added to a thread, so stores may keep and return the same objects.
 */
export interface ChatMessage {
  role: ChatRole;
  contents: AIContent[];
  /** Who wrote it: the agent's name on its replies, or a user's name. */
  authorName?: string;
  messageId?: string;
  /** ISO 8601. */
  createdAt?: string;
  additionalProperties?: JsonObject;
}

/** What a run accepts as input. */
export type AgentInput = string | ChatMessage | readonly ChatMessage[];

export function textMessage(role: ChatRole, text: string, authorName?: string): ChatMessage {
  const message: ChatMessage = { role, contents: [{ kind: 'text', text }] };
  if (authorName !== undefined) message.authorName = authorName;
  return message;
}

export function toMessages(input: AgentInput): ChatMessage[] {
  if (typeof input === 'string') return [textMessage('user', input)];
  if (Array.isArray(input)) return [...(input as readonly ChatMessage[])];
  return [input as ChatMessage];
}

/** The concatenated text of a message's text contents. */
export function messageText(message: ChatMessage): string {
  let text = '';
  for (const c of message.contents) if (isText(c)) text += c.text;
  return text;
}

/** Function calls in `messages` that have no result in `messages`. */
export function unansweredCalls(messages: readonly ChatMessage[]): FunctionCallContent[] {
  const answered = new Set<string>();
  for (const m of messages) for (const c of m.contents) if (isFunctionResult(c)) answered.add(c.callId);
  const calls: FunctionCallContent[] = [];
  for (const m of messages) for (const c of m.contents) if (isFunctionCall(c) && !answered.has(c.callId)) calls.push(c);
  return calls;
}

/** The user's answer to an approval request, as a message to pass to the next run. */
export function approvalResponse(request: { callId: string }, approved: boolean, reason?: string): ChatMessage {
  const content: FunctionApprovalResponseContent = { kind: 'function-approval-response', callId: request.callId, approved };
  if (reason !== undefined) content.reason = reason;
  return { role: 'user', contents: [content] };
}
