import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import type { FunctionApprovalRequestContent } from '../messages/content.js';
import { formatHostedMcpCall, formatToolCall, formatToolResult } from './message-format.js';

/**
 * Writes one streamed reply: text deltas as they come after `<agent>: `, and each tool call,
 * tool result, hosted MCP call (the service's, once it finished) and approval request on a line of its own.
 */
export class ReplyPrinter {
  #lineOpen = false;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly label: string,
    /** Tool names by call id, shared across turns: an approved call's result comes a turn later. */
    private readonly callNames: Map<string, string> = new Map(),
  ) {}

  print(update: AgentRunResponseUpdate): void {
    if (update.text) {
      if (!this.#lineOpen) this.out.write(`${this.label}: `);
      this.#lineOpen = true;
      this.out.write(update.text);
    }
    for (const content of update.contents) {
      if (content.kind === 'function-call') {
        this.callNames.set(content.callId, content.name);
        this.#line(formatToolCall(content));
      } else if (content.kind === 'function-result') {
        this.#line(formatToolResult(content, this.callNames.get(content.callId)));
      } else if (content.kind === 'hosted-mcp-call') {
        for (const line of formatHostedMcpCall(content)) this.#line(line);
      } else if (content.kind === 'function-approval-request') {
        this.approvalNeeded(content);
      }
    }
  }

  /** A call waiting for the user, from this reply or from a resumed thread. */
  approvalNeeded(request: FunctionApprovalRequestContent): void {
    this.callNames.set(request.callId, request.name);
    this.#line(`[approval needed] ${request.name} ${request.arguments || '{}'}: answer /approve or /reject [reason]`);
  }

  /** Ends an open text line. */
  end(): void {
    if (this.#lineOpen) this.out.write('\n');
    this.#lineOpen = false;
  }

  #line(text: string): void {
    this.end();
    this.out.write(`${text}\n`);
  }
}
