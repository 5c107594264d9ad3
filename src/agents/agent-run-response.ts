import type { ToolCallDelta } from '../clients/chat-response.js';
import { responseText } from '../clients/chat-response.js';
import type { AIContent, FunctionApprovalRequestContent, UsageDetails } from '../messages/content.js';
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
