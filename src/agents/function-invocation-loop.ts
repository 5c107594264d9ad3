import type { ChatOptions } from '../clients/chat-options.js';
import { type ChatResponse, type ChatResponseUpdate, functionCallsOf } from '../clients/chat-response.js';
import { AbortError } from '../errors/skein-error.js';
import type { ChatMessage } from '../messages/chat-message.js';
import { withField } from '../messages/message-copy.js';
import { type FunctionCallContent, type FunctionResultContent, type UsageDetails, addUsage } from '../messages/content.js';
import type { AgentThread } from '../threads/agent-thread.js';
import type { AITool } from '../tools/ai-tool.js';
import { namingCall, notRun } from './call-result.js';
import { partitionByApproval, runToolCall } from './tool-approval-gate.js';

// Its old home; kept so `skein` and deep imports still find it.
export { notRun } from './call-result.js';

/** One model call: streaming or not, the loop does not care. `onUpdate` sees streamed updates (keepPartial). */
export type CallModel = (messages: readonly ChatMessage[], options: ChatOptions, onUpdate?: (update: ChatResponseUpdate) => void) => Promise<ChatResponse>;

export interface FunctionLoopRequest {
  callModel: CallModel;
  /** Earlier history to send (message-store threads); empty for service threads. */
  history: readonly ChatMessage[];
  /** Messages added for this run only (context providers): sent before the input, never stored. */
  contextMessages?: readonly ChatMessage[];
  input: readonly ChatMessage[];
  options: ChatOptions;
  /** Whether the service keeps history: then each request sends only what is new. */
  serviceManaged: boolean;
  tools: ReadonlyMap<string, AITool>;
  maxIterations: number;
  /**
   * The run's signal, or any abort state (ChatAgent's is one that makes its AbortSignal only on
   * demand); none when nothing can abort the run (tools then get a never-aborting signal).
   */
  signal?: AbortSignal | AbortState;
  thread?: AgentThread;
  /** Called with each model response's messages and each tool-result message, in order. */
  onMessages?: (messages: readonly ChatMessage[], fromModel: boolean) => void;
  /** Runs one tool call (function-call middleware wraps it); `tool.invoke` by default. */
  invokeTool?: (call: FunctionCallContent, tool: AITool) => Promise<FunctionResultContent>;
}

export interface FunctionLoopResult {
  /** Every message the turn produced, in order: model replies, tool results. */
  messages: ChatMessage[];
  responseId?: string;
  conversationId?: string;
  usage?: UsageDetails;
  continuation?: Record<string, unknown>;
  /** Calls of tools marked `requiresApproval`: the run stopped to ask the user about them. */
  pendingApprovals?: FunctionCallContent[];
  /** With `pendingApprovals`: the results of the other calls of that round (they ran; the model has not read them yet). */
  heldResults?: FunctionResultContent[];
}

/**
 * Calls the model, runs the tool calls it asks for (in parallel), feeds the results back and
 * repeats until the model answers without calls or `maxIterations` rounds of tools have run.
 * On the limit, the pending calls get error results and the model is asked once more with tool
 * choice `none`, so the turn never ends on a call without a result.
 */
export function runFunctionLoop(request: FunctionLoopRequest): Promise<FunctionLoopResult> {
  return new FunctionLoop(request).start();
}

const NO_MESSAGES: readonly ChatMessage[] = [];

/**
 * The loop's state between model calls. A promise chain, not an async function: while the model
 * call is in flight a run keeps this object and one callback, not a suspended frame with every
 * register of it (bytes per concurrent run, docs/performance.md item 14).
 */
class FunctionLoop {
  readonly #request: FunctionLoopRequest;
  readonly #result: FunctionLoopResult = { messages: [] };
  #pending: readonly ChatMessage[] | undefined;
  #options: ChatOptions;
  #round = 0;

  constructor(request: FunctionLoopRequest) {
    this.#request = request;
    this.#options = request.options;
  }

  /** Like an async function: what the first round throws is the promise's rejection. */
  start(): Promise<FunctionLoopResult> {
    try {
      return this.#callModel();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #callModel(): Promise<FunctionLoopResult> {
    const request = this.#request;
    const result = this.#result;
    throwIfAborted(request.signal);
    const context = request.contextMessages;
    const toSend = request.serviceManaged
      ? (this.#pending ?? (context?.length ? [...context, ...request.input] : request.input))
      : request.history.concat(context ?? NO_MESSAGES, request.input, result.messages);
    // The options object is the run's own; a copy is needed only once the service named a conversation.
    const callOptions = result.conversationId === undefined ? this.#options : { ...this.#options, conversationId: result.conversationId };
    return Promise.resolve(request.callModel(toSend, callOptions)).then(this.#answered);
  }

  // One callback per loop, made once: the model's answer of every round comes here.
  readonly #answered = (response: ChatResponse): FunctionLoopResult | Promise<FunctionLoopResult> => {
    const request = this.#request;
    const result = this.#result;
    const stamped = stampCreatedAt(response);
    absorb(result, stamped);
    request.onMessages?.(stamped.messages, true);

    const allCalls = functionCallsOf(stamped.messages);
    if (allCalls.length === 0) return result;
    if (this.#round >= request.maxIterations) {
      // At the limit none runs at all: every call gets its error result.
      const notRunAtLimit = allCalls.map((call) => notRun(call, `not run: the limit of ${request.maxIterations} tool rounds for one run was reached.`));
      return this.#afterTools(allCalls, [], notRunAtLimit, true);
    }
    // The approval gate decides which calls wait for the user.
    const { runNow, awaitApproval } = partitionByApproval(allCalls, request.tools);
    return invokeAll(runNow, request).then((results) => this.#afterTools(runNow, awaitApproval, results, false));
  };

  #afterTools(
    calls: readonly FunctionCallContent[],
    needApproval: FunctionCallContent[],
    results: FunctionResultContent[],
    limitReached: boolean,
  ): FunctionLoopResult | Promise<FunctionLoopResult> {
    const request = this.#request;
    const result = this.#result;
    if (results.length) {
      const toolMessage: ChatMessage = { role: 'tool', contents: results, createdAt: new Date().toISOString() };
      result.messages.push(toolMessage);
      request.onMessages?.([toolMessage], false);
      this.#pending = [toolMessage];
    }
    if (needApproval.length) {
      // Stop and ask: these calls stay open until the user answers in the next run.
      result.pendingApprovals = needApproval;
      if (results.length) result.heldResults = results.map((r) => namingCall(r, calls.find((c) => c.callId === r.callId)!));
      return result;
    }
    if (limitReached) {
      if (this.#options.toolChoice === 'none') return result; // the model ignored tool choice none: stop here, calls answered
      this.#options = { ...this.#options, toolChoice: 'none' };
    }
    this.#round++;
    return this.#callModel();
  }
}

/** Replies keep when they were made, like the user's input and tool results; a client that knows the service's time sets it first. */
function stampCreatedAt(response: ChatResponse): ChatResponse {
  // A loop, not every + map: this runs on every model call.
  const messages = response.messages;
  let stamped: ChatMessage[] | undefined;
  let now: string | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.createdAt) continue;
    stamped ??= messages.slice();
    stamped[i] = withField(message, 'createdAt', (now ??= new Date().toISOString()));
  }
  return stamped ? { ...response, messages: stamped } : response;
}

function absorb(result: FunctionLoopResult, response: ChatResponse): void {
  result.messages.push(...response.messages);
  if (response.responseId) result.responseId = response.responseId;
  if (response.conversationId) result.conversationId = response.conversationId;
  if (response.continuation) result.continuation = { ...result.continuation, ...response.continuation };
  result.usage = addUsage(result.usage, response.usage);
}

async function invokeAll(calls: FunctionCallContent[], request: FunctionLoopRequest): Promise<FunctionResultContent[]> {
  return Promise.all(
    calls.map((call) => {
      const tool = request.tools.get(call.name);
      if (!tool) {
        const known = [...request.tools.keys()];
        return notRun(call, `unknown tool "${call.name}"; available tools: ${known.length ? known.join(', ') : 'none'}.`);
      }
      // Through the approval gate: a tool that needs approval never gets here without one.
      return runToolCall({
        call,
        tool,
        invoke: () => (request.invokeTool ? request.invokeTool(call, tool) : tool.invoke({ call, signal: toolSignal(request.signal), thread: request.thread })),
      });
    }),
  ).then((results) => {
    throwIfAborted(request.signal);
    return results;
  });
}

/** What the loop reads of an abort: an AbortSignal is one. */
export interface AbortState {
  readonly aborted: boolean;
  readonly reason?: unknown;
  /** The AbortSignal tools get. */
  readonly signal?: AbortSignal;
}

function toolSignal(state: AbortSignal | AbortState | undefined): AbortSignal {
  if (state instanceof AbortSignal) return state;
  return state?.signal ?? new AbortController().signal;
}

export function throwIfAborted(signal: AbortState | undefined): void {
  if (signal?.aborted) throw new AbortError(undefined, { cause: signal.reason });
}
