import type { ToolDeclaration } from '../clients/chat-options.js';
import type { FunctionCallContent, FunctionResultContent } from '../messages/content.js';
import type { AgentThread } from '../threads/agent-thread.js';

export interface ToolInvocationContext {
  /** Aborts when the run is aborted. */
  signal: AbortSignal;
  call: FunctionCallContent;
  thread?: AgentThread;
}

/** A function the agent can run for the model. Contribute tools to a container under `AITool`. */
export const AITool = Symbol('AITool');
export interface AITool {
  readonly declaration: ToolDeclaration;
  /** When true, a call stops the run with an approval request; it runs only once the user approves. */
  readonly requiresApproval?: boolean;
  /** Runs the call; never throws for the call's own failures: they become a result with `error`. */
  invoke(context: ToolInvocationContext): Promise<FunctionResultContent>;
}
