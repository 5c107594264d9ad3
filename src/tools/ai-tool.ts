import type { ToolDeclaration } from '../clients/chat-options.js';
import type { FunctionCallContent, FunctionResultContent } from '../messages/content.js';
import type { AgentThread } from '../threads/agent-thread.js';

export interface ToolInvocationContext {
  /** Aborts when the run is aborted. */
  signal: AbortSignal;
  call: FunctionCallContent;
  thread?: AgentThread;
  /**
   * Set in durable runs (`skein/dbos`): stable across every retry of this one call, so a tool
   * with side effects can pass it to the service it calls and do its work once. A recorded step
   * is at-least-once: a process killed after the tool did its work, before its result was
   * recorded, runs the tool again with the same key.
   */
  idempotencyKey?: string;
}

/** Where a tool comes from when it is not a local function: telemetry and the Dev UI name it. */
export interface ToolSource {
  /** The kind of source, e.g. `mcp`. */
  readonly kind: string;
  /** The server (or service) the tool belongs to, e.g. the MCP server's configured name. */
  readonly server?: string;
  /** The tool's own name there, when the agent sees it under another (a prefix). */
  readonly name?: string;
}

/** A function the agent can run for the model. Contribute tools to a container under `AITool`. */
export const AITool = Symbol('AITool');
export interface AITool {
  readonly declaration: ToolDeclaration;
  /** When true, a call stops the run with an approval request; it runs only once the user approves. */
  readonly requiresApproval?: boolean;
  /** Set by tools that call out to another server (MCP); local function tools leave it out. */
  readonly source?: ToolSource;
  /** Runs the call; never throws for the call's own failures: they become a result with `error`. */
  invoke(context: ToolInvocationContext): Promise<FunctionResultContent>;
}
