// Observable alone: the rxjs index loads every operator (megabytes of RSS); same class either way.
// The declarations name rxjs's public Observable type; the class comes from its own module.
import type { Observable, Observer, Unsubscribable } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import type { ChatClient, ThreadKind } from '../clients/chat-client.js';
import { type ChatOptions, type ToolDeclaration, mergeChatOptions } from '../clients/chat-options.js';
import { type ChatResponse, ChatResponseFolder, type ChatResponseUpdate } from '../clients/chat-response.js';
import { runStreamFor } from '../clients/direct-stream.js';
import { AbortError, SkeinError, ThreadCompatibilityError } from '../errors/skein-error.js';
import { type AgentInput, type ChatMessage, toMessages } from '../messages/chat-message.js';
import { withField } from '../messages/message-copy.js';
import { mapPacked } from '../messages/packed-map.js';
import type { FunctionCallContent, FunctionResultContent } from '../messages/content.js';
import type { JsonObject } from '../serialization/json.js';
import { type SerializationRegistry, defaultSerializationRegistry } from '../serialization/serialization-registry.js';
import { AgentThread, type ThreadConcurrency } from '../threads/agent-thread.js';
import { type ForkThreadOptions, type GetMessagesOptions, pageMessages } from '../threads/thread-history.js';
import type { ChatMessageStoreFactory } from '../threads/chat-message-store.js';
import type { ChatReducer } from '../threads/chat-reducer.js';
import { InMemoryChatMessageStoreFactory } from '../threads/in-memory-chat-message-store.js';
import { DefaultThreadFactory, type ThreadFactory } from '../threads/thread-factory.js';
import type { AITool } from '../tools/ai-tool.js';
import { toolMap } from '../tools/tool-map.js';
import { type AIToolSet, isToolSet } from '../tools/ai-tool-set.js';
import { AIAgent, type AgentRunOptions } from './ai-agent.js';
import { AgentRunResponse, type AgentRunResponseUpdate, toAgentUpdate } from './agent-run-response.js';
import { type AIContext, type ContextProvider, providerState, withProviderState } from './context-provider.js';
import {
  approvalRequestsFor,
  pendingApprovalsOf,
  settleThreadApprovals,
  splitApprovalAnswers,
  surfacedApprovalsIn,
  surfacedApprovalsOf,
  takeSurfacedAnswers,
  withHeldResults,
  withPendingApprovals,
  withSurfacedApprovals,
} from './function-approvals.js';
import { deleteThreadHistory, forkThread, threadHistory } from './fork-thread.js';
import { type AgentMiddleware, MiddlewarePipeline } from './middleware.js';
import { type CallModel, type FunctionLoopRequest, type FunctionLoopResult, runFunctionLoop, throwIfAborted } from './function-invocation-loop.js';
import { PartialTurn } from './partial-turn.js';
import { RunAbort, type RunAbortListener } from './run-abort.js';
import type { RunSteps } from './run-steps.js';

export interface ChatAgentOptions {
  chatClient: ChatClient;
  /** Recorded as `authorName` on the agent's messages and in the threads it makes. */
  name?: string;
  description?: string;
  instructions?: string;
  /**
   * Fixed tools, and tool sets listed again at the start of every run (e.g. an MCP server:
   * `mcpServer({ ... })` from `skein/mcp`).
   */
  tools?: readonly (AITool | AIToolSet)[];
  /** Default model options for every run (model, temperature, provider extras). */
  chatOptions?: ChatOptions;
  /** Where new Skein-managed threads keep their messages; in memory by default. */
  chatMessageStoreFactory?: ChatMessageStoreFactory;
  threadFactory?: ThreadFactory;
  serializationRegistry?: SerializationRegistry;
  /** Rounds of tool calls one run may make before the model is asked to answer without tools. Default 8. */
  maxToolIterations?: number;
  /** What a second run on a busy thread does. Default `queue`. */
  concurrency?: ThreadConcurrency;
  /** Memory and context, invoked before and after each run, in order. */
  contextProviders?: readonly ContextProvider[];
  /** Run, function-call and chat-client middleware; the first of each list is the outermost. */
  middleware?: AgentMiddleware;
  /** Shrinks a store thread's history before each run (the stored history is unchanged). */
  chatReducer?: ChatReducer;
  /**
   * Default of `AgentRunOptions.keepPartial`: a failed run on a message-store thread records the
   * assistant text that arrived (marked `partial`). Default false: a failed run changes nothing.
   */
  keepPartial?: boolean;
}

const DEFAULT_MAX_TOOL_ITERATIONS = 8;

/** An agent over any ChatClient: instructions, tools, threads of the client's kind. */
export class ChatAgent extends AIAgent {
  readonly name: string | undefined;
  readonly description: string | undefined;
  readonly chatClient: ChatClient;
  readonly instructions: string | undefined;
  readonly #tools: ReadonlyMap<string, AITool>;
  readonly #toolSets: readonly AIToolSet[];
  readonly #chatOptions: ChatOptions | undefined;
  readonly #storeFactory: ChatMessageStoreFactory;
  readonly #threadFactory: ThreadFactory;
  readonly #registry: SerializationRegistry;
  readonly #maxToolIterations: number;
  readonly #concurrency: ThreadConcurrency;
  readonly #contextProviders: readonly ContextProvider[];
  readonly #middleware: MiddlewarePipeline;
  readonly #reducer: ChatReducer | undefined;
  /** The agent's own tools as the client sees them, built once (most runs add none). */
  readonly #toolList: AITool[];
  readonly #declarations: ToolDeclaration[] | undefined;
  readonly #keepPartial: boolean;

  constructor(options: ChatAgentOptions) {
    super();
    if (!options?.chatClient) throw new TypeError('ChatAgent needs a chatClient, e.g. new ChatAgent({ chatClient: new OpenAIChatClient({ ... }) }).');
    this.chatClient = options.chatClient;
    this.name = options.name;
    this.description = options.description;
    this.instructions = options.instructions;
    this.#tools = toolMap((options.tools ?? []).filter((t): t is AITool => !isToolSet(t)));
    this.#toolSets = (options.tools ?? []).filter(isToolSet);
    this.#chatOptions = options.chatOptions;
    this.#storeFactory = options.chatMessageStoreFactory ?? new InMemoryChatMessageStoreFactory();
    this.#threadFactory = options.threadFactory ?? new DefaultThreadFactory();
    this.#registry = options.serializationRegistry ?? defaultSerializationRegistry();
    this.#maxToolIterations = options.maxToolIterations ?? DEFAULT_MAX_TOOL_ITERATIONS;
    this.#concurrency = options.concurrency ?? 'queue';
    this.#contextProviders = [...(options.contextProviders ?? [])];
    this.#middleware = new MiddlewarePipeline(options.middleware);
    this.#reducer = options.chatReducer;
    this.#toolList = [...this.#tools.values()];
    this.#declarations = this.#toolList.length ? this.#toolList.map((t) => t.declaration) : undefined;
    this.#keepPartial = options.keepPartial ?? false;
  }

  /** The fixed tools (tool sets are listed per run: see `toolSets`). */
  get tools(): AITool[] {
    return [...this.#toolList];
  }

  get toolSets(): AIToolSet[] {
    return [...this.#toolSets];
  }

  /** The kind of thread this agent makes and continues: the client's, as configured for this agent. */
  get threadKind(): ThreadKind {
    return this.chatClient.threadKindFor?.(this.#chatOptions ?? {}) ?? this.chatClient.threadKind;
  }

  getNewThread(): AgentThread {
    return this.#threadFactory.createThread({
      provider: this.chatClient.providerId,
      agent: this.name,
      threadKind: this.threadKind,
      messageStoreFactory: this.#storeFactory,
    });
  }

  async deserializeThread(serialized: unknown): Promise<AgentThread> {
    const thread = await this.#registry.readThread(serialized, { messageStoreFactory: this.#storeFactory });
    this.assertCompatible(thread);
    return thread;
  }

  async deleteThread(thread: AgentThread): Promise<void> {
    this.assertCompatible(thread);
    return deleteThreadHistory(this.chatClient, thread);
  }

  override async getMessages(thread: AgentThread, options: GetMessagesOptions = {}): Promise<ChatMessage[]> {
    this.assertCompatible(thread);
    return pageMessages(await threadHistory(this.chatClient, thread, options.signal), options);
  }

  /**
   * Forks by kind: a message-store thread gets a new store holding the copied messages (the store's own `fork` when it has one); a service
   * thread a new service thread from the client (`forkServiceThread`), else ForkUnsupportedError. Waits for a running turn, never forking half of one.
   */
  override async forkThread(thread: AgentThread, options: ForkThreadOptions = {}): Promise<AgentThread> {
    this.assertCompatible(thread);
    return forkThread(this.chatClient, this.#storeFactory, () => this.getNewThread(), thread, options);
  }

  async run(input: AgentInput, options: AgentRunOptions = {}): Promise<AgentRunResponse> {
    // Without the caller's signal nothing can abort the run: no controller is made for it (the
    // SDK would also hang a listener on it per request); tools get a signal of their own.
    return this.#runOnThread(input, options, options.signal ? new RunAbort(options.signal, false) : undefined, this.#getResponse);
  }

  readonly #getResponse: CallModel = (messages, chatOptions) => this.chatClient.getResponse(messages, chatOptions);

  runStream(input: AgentInput, options: AgentRunOptions = {}): Observable<AgentRunResponseUpdate> {
    return new RxObservable<AgentRunResponseUpdate>((subscriber) => {
      // Unsubscribing aborts the run: the model stream in flight is unsubscribed (which aborts
      // its request) and tools see the run's signal, made only if a tool asks for it.
      const abort = new RunAbort(options.signal, true);
      const emit = (update: ChatResponseUpdate) => {
        if (!subscriber.closed) subscriber.next(toAgentUpdate(update, this.name));
      };
      const callModel: CallModel = (messages, chatOptions, onUpdate) =>
        collectStream(this.chatClient.getStreamingResponse(messages, chatOptions), onUpdate ? (u) => (onUpdate(u), emit(u)) : emit, abort);
      // Once the run has settled there is nothing to abort; building the AbortError and firing
      // the abort event on every completed stream was a measurable share of a streamed turn.
      let settled = false;
      this.#runOnThread(input, options, abort, callModel, emit).then(
        () => {
          settled = true;
          subscriber.complete();
        },
        (error: unknown) => {
          settled = true;
          if (!subscriber.closed) subscriber.error(error);
        },
      );
      return () => {
        if (!settled) abort.abort(new AbortError('The stream was unsubscribed; the thread is unchanged.'));
        abort.dispose();
      };
    });
  }

  /** Throws ThreadCompatibilityError when `thread` cannot be continued by this agent. */
  assertCompatible(thread: AgentThread): void {
    const provider = this.chatClient.providerId;
    // Built only for an error: this runs on every turn.
    const made = () => `made by ${thread.origin.provider}${thread.origin.agent ? ` (agent "${thread.origin.agent}")` : ''}`;
    if (thread.origin.provider !== provider) {
      throw new ThreadCompatibilityError(
        `Expected a thread of provider "${provider}", found a thread ${made()}. Continue it with an agent on ${thread.origin.provider}, or start a new thread with agent.getNewThread().`,
      );
    }
    if (thread.origin.agent !== undefined && this.name !== undefined && thread.origin.agent !== this.name) {
      throw new ThreadCompatibilityError(
        `Expected a thread of agent "${this.name}", found a thread ${made()}. Continue it with agent "${thread.origin.agent}", or start a new thread.`,
      );
    }
    const kind = this.threadKind;
    if (thread.serviceThreadId !== undefined && kind === 'message-store') {
      throw new ThreadCompatibilityError(
        `Expected a message-store thread (this "${provider}" agent keeps history in a message store), found a service thread with id "${thread.serviceThreadId}". Use an agent of the service that owns that id, or start a new thread.`,
      );
    }
    if (thread.messageStore !== undefined && kind === 'service') {
      throw new ThreadCompatibilityError(
        `Expected a service thread (this "${provider}" agent keeps history on the service), found a thread with a "${thread.messageStore.type}" message store. Use a message-store agent for it, or start a new thread.`,
      );
    }
  }

  /**
   * The run on `options.thread` (or a new thread) once it is acquired. Promise callbacks, not an
   * async function, here and down to the model call: while the call is in flight a run keeps
   * these callbacks, fewer bytes than suspended frames with all their registers (bytes per
   * concurrent run, docs/performance.md item 14).
   */
  #runOnThread(
    input: AgentInput,
    options: AgentRunOptions,
    abort: RunAbort | undefined,
    callModel: CallModel,
    emit?: (update: ChatResponseUpdate) => void,
  ): Promise<AgentRunResponse> {
    let thread: AgentThread;
    try {
      thread = options.thread ?? this.getNewThread();
      this.assertCompatible(thread);
    } catch (error) {
      return Promise.reject(error);
    }
    return thread.acquire(options.concurrency ?? this.#concurrency).then((release) => this.#runHeld(thread, release, input, options, abort, callModel, emit));
  }

  /** The turn on an acquired thread, released however the turn ends; an error after an abort is an AbortError. */
  #runHeld(
    thread: AgentThread,
    release: () => void,
    input: AgentInput,
    options: AgentRunOptions,
    abort: RunAbort | undefined,
    callModel: CallModel,
    emit: ((update: ChatResponseUpdate) => void) | undefined,
  ): Promise<AgentRunResponse> {
    let turn: Promise<AgentRunResponse>;
    try {
      throwIfAborted(abort);
      const messages = stamp(input);
      turn = this.#middleware.hasAgentRun
        ? this.#executeWithMiddleware(thread, messages, options, abort, callModel, emit)
        : this.#executeTurn(thread, messages, options, abort, callModel, emit);
    } catch (error) {
      turn = Promise.reject(error);
    }
    return turn.then(
      (response) => {
        release();
        return response;
      },
      (error: unknown) => {
        release();
        throw abort?.aborted && !(error instanceof AbortError) ? new AbortError(undefined, { cause: error }) : error;
      },
    );
  }

  // Apart from #runOnThread: its closure would make every run allocate a context while it waits.
  async #executeWithMiddleware(
    thread: AgentThread,
    messages: ChatMessage[],
    options: AgentRunOptions,
    abort: RunAbort | undefined,
    callModel: CallModel,
    emit?: (update: ChatResponseUpdate) => void,
  ): Promise<AgentRunResponse> {
    const context = { agent: this, thread, messages, options, streaming: emit !== undefined };
    const { response, ran } = await this.#middleware.runAgent(context, (input) => this.#executeTurn(thread, input, options, abort, callModel, emit));
    if (!ran) await this.#commitShortCircuit(thread, context.messages, response, emit);
    return response;
  }

  /** One turn: settle approvals, gather context, run the tool loop, commit once. */
  #executeTurn(
    thread: AgentThread,
    input: ChatMessage[],
    options: AgentRunOptions,
    abort: RunAbort | undefined,
    callModel: CallModel,
    emit?: (update: ChatResponseUpdate) => void,
  ): Promise<AgentRunResponse> {
    return this.#prepareTurn(thread, input, options, abort, callModel, emit).then((turn) => this.#runTurn(thread, turn, options, abort, emit));
  }

  /**
   * The prepared turn's tool loop, then its commit (#finishTurn). When the loop fails, or the run
   * was aborted by the time it ends, the turn is recorded (#turnFailed) and that error thrown.
   */
  #runTurn(
    thread: AgentThread,
    turn: PreparedTurn,
    options: AgentRunOptions,
    abort: RunAbort | undefined,
    emit: ((update: ChatResponseUpdate) => void) | undefined,
  ): Promise<AgentRunResponse> {
    const fail = (error: unknown): Promise<never> => this.#turnFailed(thread, turn, options, abort, error).then(rethrow);
    return runFunctionLoop(turn.loop).then(
      (result) => (abort?.aborted ? fail(new AbortError(undefined, { cause: abort.reason })) : this.#finishTurn(thread, turn, result, options, emit)),
      fail,
    );
  }

  /** Settles approvals, reads the history, gathers context: the tool loop's request. */
  async #prepareTurn(
    thread: AgentThread,
    input: ChatMessage[],
    options: AgentRunOptions,
    abort: RunAbort | undefined,
    callModel: CallModel,
    emit: ((update: ChatResponseUpdate) => void) | undefined,
  ): Promise<PreparedTurn> {
    // The agent's own map is shared until the run or a context provider adds tools (copy on write).
    let tools: Map<string, AITool> | ReadonlyMap<string, AITool> = options.tools?.length ? new Map([...this.#tools, ...toolMap(options.tools)]) : this.#tools;
    // Tool sets are listed before approvals are settled, so an approved call finds its tool.
    if (this.#toolSets.length) tools = await this.#withToolSets(tools, abort?.signal);
    const steps = options.steps;
    // Nearly every turn has no approval to settle: no async call (and its promise) for those.
    const approvalWork = hasApprovalWork(thread, input);
    // A turn with no tool to run needs no invoker (the loop answers a call of an unknown tool itself).
    const invokeTool = approvalWork || tools.size || this.#contextProviders.length ? this.#toolInvoker(thread, abort, steps) : undefined;
    const { turnInput, settled } = approvalWork ? await this.#settleApprovals(thread, input, tools, invokeTool!, emit) : { turnInput: input, settled: undefined };
    const stored = thread.messageStore ? await thread.messageStore.listMessages() : [];
    const history = this.#reducer && stored.length > 0 ? await this.#reducer.reduce(stored, { thread, chatClient: this.chatClient, chatOptions: this.#chatOptions, signal: abort?.callerSignal }) : stored;
    const contexts = this.#contextProviders.length ? await this.#gatherContext(thread, turnInput) : NO_CONTEXT;
    if (contexts.tools.length) {
      const all = tools === this.#tools ? new Map(this.#tools) : (tools as Map<string, AITool>);
      for (const t of contexts.tools) if (!all.has(t.declaration.name)) all.set(t.declaration.name, t);
      tools = all;
    }

    // Only store threads keep partial turns: a service thread's history is the service's to decide.
    const partial = (options.keepPartial ?? this.#keepPartial) && (thread.messageStore !== undefined || this.threadKind === 'message-store') ? new PartialTurn() : undefined;
    const modelCall = steps || partial || this.#middleware.hasChatClient ? this.#modelCaller(callModel, steps, partial, emit !== undefined) : callModel;
    const loop: FunctionLoopRequest = {
      callModel: modelCall,
      history,
      contextMessages: contexts.messages,
      input: turnInput,
      // The model call gets the caller's signal; runStream's own abort unsubscribes the stream
      // instead (collectStream). Chat-client middleware may read the signal: it gets the run's.
      options: this.#chatOptionsFor(thread, options, this.#middleware.hasChatClient ? abort?.signal : abort?.callerSignal, tools, joinInstructions(contexts.instructions, options.additionalInstructions)),
      serviceManaged: thread.messageStore === undefined && this.threadKind !== 'message-store',
      tools,
      maxIterations: options.maxToolIterations ?? this.#maxToolIterations,
      signal: abort,
      thread,
      invokeTool,
      onMessages: partial || emit ? messagesListener(partial, emit) : undefined,
    };
    return { turnInput, settled, partial, loop };
  }

  /** The turn failed: providers are told, a partial turn and settled approvals are kept; the error to throw. */
  async #turnFailed(thread: AgentThread, turn: PreparedTurn, options: AgentRunOptions, abort: RunAbort | undefined, error: unknown): Promise<unknown> {
    const { turnInput, partial, settled } = turn;
    if (this.#contextProviders.length) await this.#notifyProviders(thread, turnInput, undefined, error);
    const kept = partial ? await this.#recordPartial(thread, turnInput, partial, abort?.aborted ? toAbortError(error) : error, options.steps) : { error, committed: false };
    if (settled) await this.#keepSettledApprovals(thread, settled, kept.committed);
    return kept.error;
  }

  /** Commits the turn once and answers it. */
  async #finishTurn(
    thread: AgentThread,
    turn: PreparedTurn,
    result: FunctionLoopResult,
    options: AgentRunOptions,
    emit: ((update: ChatResponseUpdate) => void) | undefined,
  ): Promise<AgentRunResponse> {
    const turnInput = turn.turnInput;
    const produced = this.#authored(result.messages);
    const localRequests = approvalRequestsFor(result.pendingApprovals);
    if (localRequests.length) emit?.({ role: 'assistant', contents: localRequests });
    // The chat client's own requests (already in the reply, and streamed with it).
    const surfaced = surfacedApprovalsIn(produced);
    const approvalRequests = localRequests.length || surfaced.length ? [...localRequests, ...surfaced] : [];
    const withPending = withPendingApprovals(this.#contextProviders.length ? await this.#notifyProviders(thread, turnInput, produced) : thread.state, result.pendingApprovals);
    await this.#commit(thread, turnInput, produced, result, options.steps);
    // A store thread keeps those results in its tool message; a service thread holds them until the answer.
    const state = withSurfacedApprovals(withHeldResults(withPending, thread.messageStore ? undefined : result.heldResults), surfaced);
    // Service threads keep what the provider needs to continue (e.g. the agent binding).
    thread.state = result.continuation && thread.serviceThreadId !== undefined ? { ...state, continuation: result.continuation as JsonObject } : state;
    return new AgentRunResponse(produced, {
      responseId: result.responseId,
      conversationId: result.conversationId,
      usage: result.usage,
      agentName: this.name,
      approvalRequests,
    });
  }

  /** Runs one tool call through function-call middleware and durable steps. Tools always get a signal: the run's, or one that never aborts when the caller gave none. */
  #toolInvoker(thread: AgentThread, abort: RunAbort | undefined, steps: AgentRunOptions['steps']): (call: FunctionCallContent, tool: AITool) => Promise<FunctionResultContent> {
    return (call, tool) =>
      this.#middleware.callTool({ agent: this, thread, call, tool }, () => {
        const invoke = (idempotencyKey?: string) => tool.invoke({ call, signal: abort ? abort.signal : new AbortController().signal, thread, idempotencyKey });
        return steps ? steps.invokeTool(call, tool, invoke) : invoke();
      });
  }

  /** The model call with durable steps, partial-turn recording and chat-client middleware around it. */
  #modelCaller(callModel: CallModel, steps: AgentRunOptions['steps'], partial: PartialTurn | undefined, streaming: boolean): CallModel {
    const clientCall: CallModel = steps ? (messages, chatOptions, onUpdate) => steps.callModel(() => callModel(messages, chatOptions, onUpdate)) : callModel;
    if (!this.#middleware.hasChatClient) return partial ? (messages, chatOptions) => clientCall(messages, chatOptions, partial.onUpdate) : clientCall;
    return (messages, chatOptions) =>
      // A copy per call: middleware may change its context's options in place.
      this.#middleware.callModel({ agent: this, messages, options: { ...chatOptions }, streaming }, (ctx) => clientCall(ctx.messages, ctx.options, partial?.onUpdate));
  }

  async #withToolSets(tools: ReadonlyMap<string, AITool>, signal: AbortSignal | undefined): Promise<Map<string, AITool>> {
    const listed = await Promise.all(this.#toolSets.map((set) => set.listTools(signal)));
    // toolMap: a listed tool named like another tool of the agent is an error, never a silent shadow.
    return toolMap([...tools.values(), ...listed.flat()]);
  }

  /** Answers the calls that waited for approval; their results come first in this turn. */
  async #settleApprovals(
    thread: AgentThread,
    input: ChatMessage[],
    tools: ReadonlyMap<string, AITool>,
    invokeTool: (call: FunctionCallContent, tool: AITool) => Promise<FunctionResultContent>,
    emit?: (update: ChatResponseUpdate) => void,
  ): Promise<{ turnInput: ChatMessage[]; settled?: ChatMessage }> {
    const pending = pendingApprovalsOf(thread);
    // Answers to requests the chat client surfaced go to the client, in the turn's input.
    const { forClient, rest: localInput } = takeSurfacedAnswers(input, surfacedApprovalsOf(thread));
    const clientInput = forClient ? [forClient] : [];
    const { answers, rest } = splitApprovalAnswers(localInput);
    if (pending.length === 0 && answers.size === 0) return { turnInput: [...clientInput, ...localInput] };
    const { held, settled: results } = await settleThreadApprovals(thread, answers, tools, invokeTool);
    if (results.length === 0 && held.length === 0) return { turnInput: [...clientInput, ...rest] };
    if (results.length) emit?.({ role: 'tool', contents: results });
    const message: ChatMessage = { role: 'tool', contents: [...held, ...results], createdAt: new Date().toISOString() };
    return { turnInput: [message, ...clientInput, ...rest], settled: message };
  }

  /**
   * The turn failed after approved tools already ran: their results are kept (and the calls no
   * longer pending), so answering again can never run a tool twice. A service thread never got
   * them: they are held in its state, the calls stay pending, and the next answer or message
   * sends the held results without running anything again.
   */
  async #keepSettledApprovals(thread: AgentThread, settled: ChatMessage, alreadyCommitted: boolean): Promise<void> {
    if (!thread.messageStore) {
      if (pendingApprovalsOf(thread).length) thread.state = withHeldResults(thread.state, settled.contents.filter((c): c is FunctionResultContent => c.kind === 'function-result'));
      return;
    }
    if (!alreadyCommitted) {
      try {
        await thread.messageStore.addMessages([settled]);
      } catch {
        return; // the store failed too: the calls stay pending, as the thread says
      }
    }
    thread.state = withHeldResults(withPendingApprovals(thread.state, undefined), undefined);
  }

  async #gatherContext(thread: AgentThread, input: readonly ChatMessage[]): Promise<Required<AIContext>> {
    const gathered: Required<AIContext> = { instructions: '', messages: [], tools: [] };
    for (const provider of this.#contextProviders) {
      const context = await provider.invoking({ thread, input, state: providerState(thread, provider.id) });
      if (!context) continue;
      if (context.instructions) gathered.instructions += (gathered.instructions ? '\n' : '') + context.instructions;
      if (context.messages) gathered.messages.push(...context.messages);
      if (context.tools) gathered.tools.push(...context.tools);
    }
    return gathered;
  }

  /** Tells providers how the run ended; returns the thread state with their new state (not yet applied). */
  async #notifyProviders(thread: AgentThread, input: readonly ChatMessage[], response?: readonly ChatMessage[], error?: unknown): Promise<JsonObject> {
    let state = thread.state;
    for (const provider of this.#contextProviders) {
      if (!provider.invoked) continue;
      const next = await provider.invoked({ thread, input, state: providerState(thread, provider.id), response, error });
      if (next && error === undefined) state = withProviderState(state, provider.id, next);
    }
    return state;
  }

  /**
   * keepPartial: records the input and what arrived before `failure` (see PartialTurn) and
   * returns the error to throw, carrying the partial assistant message. When nothing arrived, or
   * the store append fails, the thread is unchanged and `failure` is returned as it was.
   */
  async #recordPartial(thread: AgentThread, input: ChatMessage[], partial: PartialTurn, failure: unknown, steps?: RunSteps): Promise<{ error: unknown; committed: boolean }> {
    const kept = failure instanceof SkeinError ? partial.messages(this.name) : undefined;
    if (!kept) return { error: failure, committed: false };
    try {
      // Through the run's steps like a whole turn: in a durable run the partial turn lands once too.
      await this.#commit(thread, input, kept, { messages: kept }, steps);
    } catch {
      return { error: failure, committed: false }; // the run's own failure is what the caller must see
    }
    const error = failure instanceof AbortError ? new AbortError('The run was aborted; the thread kept its partial turn (marked partial).', { cause: failure.cause }) : (failure as SkeinError);
    error.partial = [...kept].reverse().find((m) => m.additionalProperties?.partial === true);
    return { error, committed: true };
  }

  /** A run middleware answered without running: the thread records the input and that answer. */
  async #commitShortCircuit(thread: AgentThread, input: ChatMessage[], response: AgentRunResponse, emit?: (update: ChatResponseUpdate) => void): Promise<void> {
    for (const message of response.messages) emit?.({ role: message.role, contents: message.contents, messageId: message.messageId });
    if (thread.serviceThreadId !== undefined) return; // the service never saw this turn; nothing to record locally
    if (!thread.messageStore) thread.attachMessageStore(this.#storeFactory.create(thread.origin));
    await thread.messageStore!.addMessages([...input, ...response.messages]);
  }

  #chatOptionsFor(
    thread: AgentThread,
    options: AgentRunOptions,
    signal: AbortSignal | undefined,
    tools: ReadonlyMap<string, AITool>,
    extraInstructions: string,
  ): ChatOptions {
    const instructions = extraInstructions ? [this.instructions, extraInstructions].filter(Boolean).join('\n\n') : this.instructions || undefined;
    const declarations = tools === this.#tools ? this.#declarations : tools.size ? [...tools.values()].map((t) => t.declaration) : undefined;
    const continuation = thread.state.continuation;
    if (!this.#chatOptions && !options.chatOptions && !continuation) {
      // The common case, without the general merge: same keys, undefined ones left out.
      const merged: ChatOptions = {};
      if (instructions !== undefined) merged.instructions = instructions;
      if (declarations !== undefined) merged.tools = declarations;
      if (thread.serviceThreadId !== undefined) merged.conversationId = thread.serviceThreadId;
      if (signal !== undefined) merged.signal = signal;
      return merged;
    }
    return mergeChatOptions(
      { instructions },
      this.#chatOptions,
      options.chatOptions,
      { tools: declarations, conversationId: thread.serviceThreadId, signal },
      continuation ? { additionalProperties: { continuation } } : undefined,
    );
  }

  /**
   * One turn lands once: the input and every produced message appended together, or the
   * service id recorded. A store thread stays a store thread: a conversation id the service
   * returns for it is not adopted, since that would split the history in two places.
   */
  async #commit(thread: AgentThread, input: ChatMessage[], produced: ChatMessage[], result: FunctionLoopResult, steps?: RunSteps): Promise<void> {
    if (!thread.messageStore && result.conversationId !== undefined && this.threadKind !== 'message-store') {
      thread.setServiceThreadId(result.conversationId);
      return;
    }
    if (!thread.messageStore) thread.attachMessageStore(this.#storeFactory.create(thread.origin));
    const turn = [...input, ...produced];
    await (steps ? steps.appendTurn(thread.messageStore!, turn) : thread.messageStore!.addMessages(turn));
  }

  #authored(messages: ChatMessage[]): ChatMessage[] {
    if (this.name === undefined) return messages;
    const name = this.name;
    return mapPacked(messages, (m) => (m.role === 'assistant' && m.authorName === undefined ? withField(m, 'authorName', name) : m));
  }
}

function toAbortError(error: unknown): AbortError {
  return error instanceof AbortError ? error : new AbortError(undefined, { cause: error });
}

/** A context provider's instructions and the run's own, in that order, as one extra block. */
function joinInstructions(fromProviders: string, forThisRun: string | undefined): string {
  return forThisRun ? [fromProviders, forThisRun].filter(Boolean).join('\n') : fromProviders;
}

const NO_CONTEXT: Required<AIContext> = Object.freeze({ instructions: '', messages: [], tools: [] });

/** A turn ready for its tool loop, and what a failure or the commit needs of it. */
interface PreparedTurn {
  turnInput: ChatMessage[];
  /** The tool message of approvals settled before the loop, if any. */
  settled: ChatMessage | undefined;
  partial: PartialTurn | undefined;
  loop: FunctionLoopRequest;
}

/** What the tool loop reports of each finished message: kept for a partial turn, tool results streamed. */
function messagesListener(partial: PartialTurn | undefined, emit: ((update: ChatResponseUpdate) => void) | undefined): (messages: readonly ChatMessage[], fromModel: boolean) => void {
  return (messages, fromModel) => {
    partial?.completed(messages);
    if (!fromModel) emit?.({ role: 'tool', contents: messages[0]!.contents });
  };
}

/** The run's input as messages, each with a creation time (the caller's, when given). */
function stamp(input: AgentInput): ChatMessage[] {
  const now = new Date().toISOString();
  if (typeof input === 'string') return [{ role: 'user', contents: [{ kind: 'text', text: input }], createdAt: now }];
  return mapPacked(toMessages(input), (m) => (m.createdAt ? m : withField(m, 'createdAt', now)));
}

/** Calls wait for approval on the thread, or the input answers some. */
function hasApprovalWork(thread: AgentThread, input: readonly ChatMessage[]): boolean {
  return pendingApprovalsOf(thread).length > 0 || hasApprovalAnswers(input);
}

function hasApprovalAnswers(input: readonly ChatMessage[]): boolean {
  for (const message of input) for (const c of message.contents) if (c.kind === 'function-approval-response') return true;
  return false;
}

/** Aborts `controller` when `signal` does; returns the unlink for teardown. */
export function linkSignal(signal: AbortSignal | undefined, controller: AbortController): () => void {
  if (!signal) return () => {};
  if (signal.aborted) {
    controller.abort(signal.reason);
    return () => {};
  }
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/**
 * Subscribes to one streamed model call, forwarding updates, and resolves with the folded
 * response. The run's abort unsubscribes it (which aborts the request).
 */
function collectStream(stream: Observable<ChatResponseUpdate>, onUpdate: (update: ChatResponseUpdate) => void, abort: RunAbort): Promise<ChatResponse> {
  return new StreamCollector(onUpdate, abort).collect(stream);
}

/**
 * collectStream's state. One object is the stream's observer and the abort listener (of the run
 * and of the caller's signal): a stream waiting for its reply holds it alone, not five closures
 * and their context (bytes per concurrent stream, docs/performance.md).
 */
class StreamCollector implements Observer<ChatResponseUpdate>, RunAbortListener {
  // Folded as they arrive: no list of updates kept, no second pass at the end. Made with the
  // first update: a stream waiting for its reply holds nothing of it.
  #folder: ChatResponseFolder | undefined;
  readonly #onUpdate: (update: ChatResponseUpdate) => void;
  readonly #abort: RunAbort;
  #settled = false;
  // Undefined while subscribe() runs: an abort then (a consumer unsubscribing from inside a
  // synchronous emission) is applied once subscribe() returns.
  #subscription: Unsubscribable | undefined = undefined;
  // Set by collect(), before anything can settle it.
  #resolve!: (response: ChatResponse) => void;
  #reject!: (error: unknown) => void;

  constructor(onUpdate: (update: ChatResponseUpdate) => void, abort: RunAbort) {
    this.#onUpdate = onUpdate;
    this.#abort = abort;
  }

  collect(stream: Observable<ChatResponseUpdate>): Promise<ChatResponse> {
    const promise = new Promise<ChatResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    const abort = this.#abort;
    abort.onAbort(this);
    abort.callerSignal?.addEventListener('abort', this, { once: true });
    const subscription = runStreamFor(stream, this);
    this.#subscription = subscription;
    if (this.#settled && abort.aborted) subscription.unsubscribe();
    else if (abort.aborted) this.handleEvent();
    return promise;
  }

  next(update: ChatResponseUpdate): void {
    (this.#folder ??= new ChatResponseFolder()).add(update);
    this.#onUpdate(update);
  }

  error(error: unknown): void {
    if (this.#settled) return;
    this.#done();
    this.#reject(error);
  }

  complete(): void {
    if (this.#settled) return;
    this.#done();
    this.#resolve((this.#folder ?? new ChatResponseFolder()).response());
  }

  /** The run or the caller's signal aborted. */
  handleEvent(): void {
    if (this.#settled) return;
    this.#done();
    this.#subscription?.unsubscribe();
    this.#reject(new AbortError(undefined, { cause: this.#abort.reason }));
  }

  #done(): void {
    this.#settled = true;
    this.#abort.offAbort(this);
    this.#abort.callerSignal?.removeEventListener('abort', this);
  }
}

function rethrow(error: unknown): never {
  throw error;
}
