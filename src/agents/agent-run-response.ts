import type { ChatResponseUpdate, ToolCallDelta } from '../clients/chat-response.js';
import { responseText } from '../clients/chat-response.js';
import { type AIContent, type FunctionApprovalRequestContent, type UsageDetails, isText } from '../messages/content.js';
import type { ChatMessage, ChatRole } from '../messages/chat-message.js';

/** The outcome of one `agent.run`: every message the turn produced (tool calls and results included). */
export class AgentRunResponse {
  constructor(
    readonly messages: ChatMessage[],
    readonly details: {
      responseId?: string;
      conversationId?: string;
      usage?: UsageDetails;
      agentName?: string;
      approvalRequests?: FunctionApprovalRequestContent[];
    } = {},
  ) {}

  /** Calls that wait for the user: answer each with `approvalResponse(request, approved)` in the next run. */
  get approvalRequests(): FunctionApprovalRequestContent[] {
    return this.details.approvalRequests ?? [];
  }

  /** The assistant's text over the whole turn. */
  get text(): string {
    return responseText(this);
  }

  get usage(): UsageDetails | undefined {
    return this.details.usage;
  }

  get responseId(): string | undefined {
    return this.details.responseId;
  }

  toString(): string {
    return this.text;
  }
}

/** One streamed piece of a run. `text` is this update's text delta ('' when it carries none). */
export interface AgentRunResponseUpdate {
  text: string;
  contents: AIContent[];
  role?: ChatRole;
  authorName?: string;
  messageId?: string;
  responseId?: string;
  /** Arguments of a tool call as they stream in. */
  toolCallDelta?: ToolCallDelta;
}

/** A chat client's update as the agent's: its text joined, the agent's name on its own (assistant) words. */
export function toAgentUpdate(update: ChatResponseUpdate, agentName: string | undefined): AgentRunResponseUpdate {
  let text = '';
  for (const c of update.contents) if (isText(c)) text += c.text;
  const role = update.role ?? 'assistant';
  const authorName = role === 'assistant' ? agentName : undefined;
  // A streamed text delta (ids set, no tool-call delta) as one literal, in the key order of the
  // general path: fields added after a literal go to a separate property store, one more
  // allocation per update.
  const { messageId, responseId } = update;
  if (messageId && responseId && !update.toolCallDelta) {
    return authorName !== undefined ? { text, contents: update.contents, role, authorName, messageId, responseId } : { text, contents: update.contents, role, messageId, responseId };
  }
  const out: AgentRunResponseUpdate = { text, contents: update.contents, role };
  if (authorName !== undefined) out.authorName = authorName;
  if (messageId) out.messageId = messageId;
  if (responseId) out.responseId = responseId;
  if (update.toolCallDelta) out.toolCallDelta = update.toolCallDelta;
  return out;
}
