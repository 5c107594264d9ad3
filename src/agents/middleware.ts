import type { ChatOptions } from '../clients/chat-options.js';
import type { ChatResponse } from '../clients/chat-response.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { FunctionCallContent, FunctionResultContent } from '../messages/content.js';
import type { AgentThread } from '../threads/agent-thread.js';
import type { AITool } from '../tools/ai-tool.js';
import type { AIAgent, AgentRunOptions } from './ai-agent.js';
import type { AgentRunResponse } from './agent-run-response.js';

export interface AgentRunContext {
  readonly agent: AIAgent;
  readonly thread: AgentThread;
  /** The run's input; middleware may replace or change it before calling next. */
  messages: ChatMessage[];
  readonly options: AgentRunOptions;
  readonly streaming: boolean;
}

/**
 * Wraps a whole run (inside the thread's lock). Call `next()` to run, change `context.messages`
 * first to alter the input, or return a response without calling `next()` to short-circuit
 * (the thread then records the input and that response).
 */
export const AgentRunMiddleware = Symbol('AgentRunMiddleware');
export interface AgentRunMiddleware {
  onRun(context: AgentRunContext, next: () => Promise<AgentRunResponse>): Promise<AgentRunResponse>;
}

export interface FunctionCallContext {
  readonly agent: AIAgent;
  readonly thread?: AgentThread;
  readonly call: FunctionCallContent;
  readonly tool: AITool;
}

/** Wraps each tool call. Return an error result without calling `next()` to block the call. */
export const FunctionCallMiddleware = Symbol('FunctionCallMiddleware');
export interface FunctionCallMiddleware {
  onFunctionCall(context: FunctionCallContext, next: () => Promise<FunctionResultContent>): Promise<FunctionResultContent>;
}

export interface ChatRequestContext {
  readonly agent: AIAgent;
  /** What is about to be sent; change it (e.g. redact) before calling next. */
  messages: readonly ChatMessage[];
  options: ChatOptions;
  readonly streaming: boolean;
}

/**
 * Wraps each model call, streaming or not. Changing `context.messages` changes what leaves the
 * process, not what the thread keeps.
 */
export const ChatClientMiddleware = Symbol('ChatClientMiddleware');
export interface ChatClientMiddleware {
  onChatRequest(context: ChatRequestContext, next: () => Promise<ChatResponse>): Promise<ChatResponse>;
}

/** Runs `last` through `layers` in order: the first registered is the outermost. */
export function runThrough<C, R>(
  layers: readonly ((context: C, next: () => Promise<R>) => Promise<R>)[],
  context: C,
  last: (context: C) => Promise<R>,
): Promise<R> {
  const step = (i: number): Promise<R> => (i === layers.length ? last(context) : layers[i]!(context, () => step(i + 1)));
  return step(0);
}
