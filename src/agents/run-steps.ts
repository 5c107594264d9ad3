import type { ChatResponse } from '../clients/chat-response.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { FunctionCallContent, FunctionResultContent } from '../messages/content.js';
import type { ChatMessageStore } from '../threads/chat-message-store.js';
import type { AITool } from '../tools/ai-tool.js';

/**
 * The seam a durable runner (see `DurableRunner`) uses to make a ChatAgent run durable without
 * a second copy of the chat loop: the agent hands each model call, each tool call and the append
 * of the turn to these functions, innermost (middleware, context providers, reducers and
 * telemetry run around them as in any run). A plain run has none and calls directly.
 */
export interface RunSteps {
  /** One model call, after chat-client middleware: `call()` reaches the chat client. */
  callModel(call: () => Promise<ChatResponse>): Promise<ChatResponse>;
  /**
   * One tool call, after function-call middleware: `invoke(key)` runs the tool with `key` as the
   * invocation's `idempotencyKey`.
   */
  invokeTool(call: FunctionCallContent, tool: AITool, invoke: (idempotencyKey: string) => Promise<FunctionResultContent>): Promise<FunctionResultContent>;
  /** The append of the whole turn (input and every produced message) to a message-store thread. */
  appendTurn(store: ChatMessageStore, messages: readonly ChatMessage[]): Promise<void>;
}
