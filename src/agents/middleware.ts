import type { ChatOptions } from '../clients/chat-options.js';
import type { ChatResponse } from '../clients/chat-response.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { FunctionCallContent, FunctionResultContent } from '../messages/content.js';
import type { AgentThread } from '../threads/agent-thread.js';
import type { AITool } from '../tools/ai-tool.js';
import type { AIAgent, AgentRunOptions } from './ai-agent.js';
import type { AgentRunResponse, AgentRunResponseUpdate } from './agent-run-response.js';

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

/** The middleware an agent takes; the first of each list is the outermost. */
export interface AgentMiddleware {
  agentRun?: readonly AgentRunMiddleware[];
  functionCall?: readonly FunctionCallMiddleware[];
  chatClient?: readonly ChatClientMiddleware[];
}

type Layer<C, R> = (context: C, next: () => Promise<R>) => Promise<R>;

/**
 * An agent's middleware, ready to apply. ChatAgent and the plugins' service agents (Assistants,
 * A2A) all run their turns and tool calls through one of these, so a middleware behaves the same
 * whichever agent it is given to.
 */
export class MiddlewarePipeline {
  readonly #agentRun: Layer<AgentRunContext, AgentRunResponse>[];
  readonly #functionCall: Layer<FunctionCallContext, FunctionResultContent>[];
  readonly #chatClient: Layer<ChatRequestContext, ChatResponse>[];

  constructor(middleware: AgentMiddleware = {}) {
    this.#agentRun = (middleware.agentRun ?? []).map((m) => (c, next) => m.onRun(c, next));
    this.#functionCall = (middleware.functionCall ?? []).map((m) => (c, next) => m.onFunctionCall(c, next));
    this.#chatClient = (middleware.chatClient ?? []).map((m) => (c, next) => m.onChatRequest(c, next));
  }

  get hasAgentRun(): boolean {
    return this.#agentRun.length > 0;
  }

  get hasChatClient(): boolean {
    return this.#chatClient.length > 0;
  }

  /**
   * Runs `turn` through the agent-run middleware; call it inside the thread's lock. `turn` gets
   * the input as the middleware left it. `ran` is false when a middleware answered without
   * calling `next` (a short-circuit): the turn did not run and the caller decides what the
   * thread records. When `emit` is given (a streamed run), a short-circuit's messages are
   * streamed through it, since no turn streamed anything.
   */
  async runAgent(
    context: AgentRunContext,
    turn: (messages: ChatMessage[]) => Promise<AgentRunResponse>,
    emit?: (update: AgentRunResponseUpdate) => void,
  ): Promise<{ response: AgentRunResponse; ran: boolean }> {
    if (this.#agentRun.length === 0) return { response: await turn(context.messages), ran: true };
    let ran = false;
    const response = await runThrough(this.#agentRun, context, (ctx) => {
      ran = true;
      return turn(ctx.messages);
    });
    if (!ran && emit) for (const update of runUpdates(response, context.agent.name)) emit(update);
    return { response, ran };
  }

  /** Runs one tool call through the function-call middleware. */
  callTool(context: FunctionCallContext, invoke: () => Promise<FunctionResultContent>): Promise<FunctionResultContent> {
    return this.#functionCall.length === 0 ? invoke() : runThrough(this.#functionCall, context, invoke);
  }

  /** Runs one model call through the chat-client middleware; `call` sends what the middleware left in the context. */
  callModel(context: ChatRequestContext, call: (context: ChatRequestContext) => Promise<ChatResponse>): Promise<ChatResponse> {
    return this.#chatClient.length === 0 ? call(context) : runThrough(this.#chatClient, context, call);
  }
}

/** A response's messages as the updates a stream would have carried (assistant ones authored by `agentName`). */
export function runUpdates(response: AgentRunResponse, agentName?: string): AgentRunResponseUpdate[] {
  return response.messages.map((m) => {
    let text = '';
    for (const c of m.contents) if (c.kind === 'text') text += c.text;
    const update: AgentRunResponseUpdate = { text, contents: m.contents, role: m.role };
    const author = m.authorName ?? (m.role === 'assistant' ? agentName : undefined);
    if (author !== undefined) update.authorName = author;
    if (m.messageId) update.messageId = m.messageId;
    if (response.responseId) update.responseId = response.responseId;
    return update;
  });
}
