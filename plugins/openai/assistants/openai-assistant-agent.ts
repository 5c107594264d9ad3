import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type OpenAI from 'openai';
// The declarations name rxjs's public Observable type; the class comes from its own module.
import type { Observable, Subscriber } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import {
  AbortError,
  ConnectionError,
  type AgentMiddleware,
  AgentRunResponse,
  type AgentRunOptions,
  type AgentRunResponseUpdate,
  AgentThread,
  AIAgent,
  type AgentInput,
  type AIContent,
  type ChatMessage,
  type FunctionCallContent,
  type FunctionResultContent,
  type JsonObject,
  type SerializationRegistry,
  SkeinError,
  ThreadCompatibilityError,
  type ThreadConcurrency,
  type AITool,
  type UsageDetails,
  addUsage,
  linkSignal,
  MiddlewarePipeline,
  responseFromUpdates,
  toMessages,
  toolMap,
  defaultSerializationRegistry,
} from 'skein';
import { toSkeinError } from '../openai-errors.js';
import {
  assistantCreateParams,
  definitionFromAssistant,
  functionTool,
  hostedTools,
  mergeExecutionOptions,
  type OpenAIAssistantDefinition,
  type OpenAIAssistantExecutionOptions,
  type OpenAIAssistantInvocationOptions,
  type OpenAIAssistantToolCallBehavior,
  type OpenAIThreadCreationOptions,
  parseExecutionOptions,
  THREAD_STATE_KEY,
  threadExecutionOptions,
  toolResources,
} from './openai-assistant-definition.js';
import { AssistantDeletedError, AssistantRunError, AssistantRunTimeoutError } from './openai-assistant-errors.js';
import {
  annotationsJson,
  createVectorStore,
  deleteFile,
  deleteVectorStore,
  type OpenAIFileUpload,
  type OpenAIUploadedFile,
  type OpenAIVectorStore,
  type OpenAIVectorStoreCreationOptions,
  uploadFile,
} from './openai-assistant-files.js';
import { clientFrom, type OpenAIServiceConfiguration } from './openai-service-configuration.js';

export const OPENAI_ASSISTANTS_CLIENT_ID = 'openai-assistants';

export interface OpenAIAssistantPollingOptions {
  /** Wait between polls when the service sends no `openai-poll-after-ms` hint. Default 500. */
  intervalMs?: number;
  /** The longest a run may stay queued / in progress before it is cancelled. Default 10 minutes. */
  timeoutMs?: number;
}

export interface OpenAIAssistantAgentOptions {
  client: OpenAI | OpenAIServiceConfiguration;
  /** With an `id`, the agent uses that assistant; without, it creates one on first use. */
  definition: OpenAIAssistantDefinition;
  /** Skein tools the assistant may call; their declarations are sent on create. */
  tools?: readonly AITool[];
  /** Recorded in threads; defaults to the definition's name. */
  name?: string;
  polling?: OpenAIAssistantPollingOptions;
  serializationRegistry?: SerializationRegistry;
  concurrency?: ThreadConcurrency;
  /**
   * True when `definition` was read from the service (as `retrieve` does). Otherwise a
   * definition with an id is fetched on first use, so its execution options are the stored ones.
   */
  definitionIsRemote?: boolean;
  /**
   * Agent-run middleware wraps each turn (`run`, `runStream`, `invoke`) inside the thread's lock;
   * function-call middleware wraps each Skein tool call the assistant requests. Chat-client
   * middleware does not apply: the model calls happen on the service, inside a run, where no
   * request passes through this process (redact input in an agent-run middleware instead).
   * A run middleware that answers without calling `next` short-circuits the turn: no assistant
   * or thread is created, nothing is recorded on the service, the thread is unchanged.
   */
  middleware?: Pick<AgentMiddleware, 'agentRun' | 'functionCall'>;
}

export interface OpenAIAssistantRunOptions extends AgentRunOptions {
  invocationOptions?: OpenAIAssistantInvocationOptions;
}

type Run = OpenAI.Beta.Threads.Run;
type RunCreateParams = OpenAI.Beta.Threads.Runs.RunCreateParamsNonStreaming;
type StreamEvent = OpenAI.Beta.AssistantStreamEvent;

const WAITING = new Set(['queued', 'in_progress', 'cancelling']);
const FAILED = new Set(['expired', 'failed', 'cancelled', 'incomplete']);
const DEFAULT_INTERVAL_MS = 500;
const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/**
 * An AIAgent backed by an OpenAI assistant (Assistants v2). History lives in the service's
 * thread: an AgentThread's `serviceThreadId` is the assistant thread id. Each turn is a run,
 * polled (or streamed) to its end; function tool calls run through the Skein tools.
 */
export class OpenAIAssistantAgent extends AIAgent {
  readonly client: OpenAI;
  readonly providerId = OPENAI_ASSISTANTS_CLIENT_ID;
  readonly #tools: ReadonlyMap<string, AITool>;
  readonly #polling: Required<OpenAIAssistantPollingOptions>;
  readonly #registry: SerializationRegistry;
  readonly #concurrency: ThreadConcurrency;
  readonly #name: string | undefined;
  readonly #middleware: MiddlewarePipeline;
  #definition: OpenAIAssistantDefinition;
  #ensuring: Promise<OpenAIAssistantDefinition> | undefined;
  #deleted = false;
  #loaded: boolean;

  constructor(options: OpenAIAssistantAgentOptions) {
    super();
    if (!options?.client) throw new TypeError('OpenAIAssistantAgent needs a client: an OpenAI SDK client or an OpenAIServiceConfiguration.');
    if (!options.definition?.model && !options.definition?.id) throw new TypeError('OpenAIAssistantAgent needs definition.id (an existing assistant) or definition.model (to create one).');
    this.client = clientFrom(options.client);
    this.#definition = { ...options.definition };
    this.#loaded = options.definitionIsRemote === true;
    this.#name = options.name ?? options.definition.name;
    this.#tools = toolMap(options.tools ?? []);
    this.#polling = { intervalMs: options.polling?.intervalMs ?? DEFAULT_INTERVAL_MS, timeoutMs: options.polling?.timeoutMs ?? DEFAULT_TIMEOUT_MS };
    this.#registry = options.serializationRegistry ?? defaultSerializationRegistry();
    this.#concurrency = options.concurrency ?? 'queue';
    // Only the two kinds that apply are taken (a container's chat-client contributions are not).
    this.#middleware = new MiddlewarePipeline({ agentRun: options.middleware?.agentRun, functionCall: options.middleware?.functionCall });
    if (this.#definition.executionOptions) parseExecutionOptions(this.#definition.executionOptions, 'definition.executionOptions');
  }

  // ---- lifecycle (static)

  /** Creates the assistant on the service and returns its agent. */
  static async create(
    client: OpenAI | OpenAIServiceConfiguration,
    definition: OpenAIAssistantDefinition,
    options: Omit<OpenAIAssistantAgentOptions, 'client' | 'definition'> = {},
  ): Promise<OpenAIAssistantAgent> {
    const agent = new OpenAIAssistantAgent({ ...options, client, definition: { ...definition, id: undefined } });
    await agent.ensureAssistant();
    return agent;
  }

  /** An agent for an existing assistant; its execution options come back from the metadata. */
  static async retrieve(
    client: OpenAI | OpenAIServiceConfiguration,
    assistantId: string,
    options: Omit<OpenAIAssistantAgentOptions, 'client' | 'definition'> = {},
  ): Promise<OpenAIAssistantAgent> {
    const sdk = clientFrom(client);
    const assistant = await call(() => sdk.beta.assistants.retrieve(assistantId));
    return new OpenAIAssistantAgent({ ...options, client: sdk, definition: definitionFromAssistant(assistant), definitionIsRemote: true });
  }

  /** Every assistant of the account, all pages, newest first. */
  static async listDefinitions(client: OpenAI | OpenAIServiceConfiguration): Promise<OpenAIAssistantDefinition[]> {
    const sdk = clientFrom(client);
    return call(async () => {
      const out: OpenAIAssistantDefinition[] = [];
      for await (const assistant of sdk.beta.assistants.list({ limit: 100 })) out.push(definitionFromAssistant(assistant));
      return out;
    });
  }

  // ---- files and vector stores (for file search)

  /** Uploads a file (purpose `assistants` unless told) for a vector store or code interpreter. */
  static async uploadFile(client: OpenAI | OpenAIServiceConfiguration, file: OpenAIFileUpload, signal?: AbortSignal): Promise<OpenAIUploadedFile> {
    return uploadFile(clientFrom(client), file, signal);
  }

  /** Deletes an uploaded file; the service removes it from every vector store too. */
  static async deleteFile(client: OpenAI | OpenAIServiceConfiguration, fileId: string, signal?: AbortSignal): Promise<void> {
    return deleteFile(clientFrom(client), fileId, signal);
  }

  /**
   * Creates a vector store over uploaded files and waits until they are processed. Attach it
   * with `definition.vectorStoreIds` (+ `enableFileSearch`) or `createThread({ vectorStoreIds })`.
   */
  static async createVectorStore(client: OpenAI | OpenAIServiceConfiguration, options: OpenAIVectorStoreCreationOptions = {}): Promise<OpenAIVectorStore> {
    return createVectorStore(clientFrom(client), options);
  }

  /** Deletes a vector store; its files stay uploaded. */
  static async deleteVectorStore(client: OpenAI | OpenAIServiceConfiguration, vectorStoreId: string, signal?: AbortSignal): Promise<void> {
    return deleteVectorStore(clientFrom(client), vectorStoreId, signal);
  }

  // ---- properties

  get name(): string | undefined {
    return this.#name;
  }

  get description(): string | undefined {
    return this.#definition.description;
  }

  /** The assistant's instructions (telemetry records them when content capture is on). */
  get instructions(): string | undefined {
    return this.#definition.instructions;
  }

  /** The assistant id (undefined until a lazily created assistant exists). */
  get id(): string | undefined {
    return this.#definition.id;
  }

  get definition(): Readonly<OpenAIAssistantDefinition> {
    return this.#definition;
  }

  get isDeleted(): boolean {
    return this.#deleted;
  }

  get tools(): AITool[] {
    return [...this.#tools.values()];
  }

  /** Creates the remote assistant if this agent was configured without an id. */
  async ensureAssistant(): Promise<OpenAIAssistantDefinition> {
    this.#assertUsable();
    if (this.#loaded) return this.#definition;
    this.#ensuring ??= call(async () => {
      const id = this.#definition.id;
      if (id) {
        this.#definition = definitionFromAssistant(await this.client.beta.assistants.retrieve(id));
        this.#loaded = true;
        return this.#definition;
      }
      const params = assistantCreateParams(this.#definition, [...this.#tools.values()].map((t) => t.declaration));
      const created = await this.client.beta.assistants.create(params);
      this.#definition = definitionFromAssistant(created);
      this.#loaded = true;
      return this.#definition;
    }).catch((error: unknown) => {
      this.#ensuring = undefined;
      throw error;
    });
    return this.#ensuring;
  }

  /** Deletes the assistant; the agent is then terminal (every further call throws AssistantDeletedError). */
  async delete(): Promise<void> {
    this.#assertUsable();
    const id = this.#definition.id;
    if (id) await call(() => this.client.beta.assistants.delete(id));
    this.#deleted = true;
  }

  // ---- threads

  /** A new, unstarted thread; the assistant thread is created on its first run. */
  getNewThread(): AgentThread {
    this.#assertUsable();
    return new AgentThread({ origin: { provider: this.providerId, agent: this.#name } });
  }

  /** Creates the assistant thread now, with its own messages, metadata, tool resources and run defaults. */
  async createThread(options: OpenAIThreadCreationOptions = {}, signal?: AbortSignal): Promise<AgentThread> {
    this.#assertUsable();
    const state: JsonObject = {};
    if (options.executionOptions) {
      state[THREAD_STATE_KEY] = { executionOptions: parseExecutionOptions(options.executionOptions, 'executionOptions') as JsonObject };
    }
    const remote = await call(
      () =>
        this.client.beta.threads.create(
          {
            messages: options.messages?.map((m) => toThreadMessage(m)),
            metadata: options.metadata,
            tool_resources: toolResources(options.codeInterpreterFileIds, options.vectorStoreIds),
          },
          { signal },
        ),
      signal,
    );
    return new AgentThread({ origin: { provider: this.providerId, agent: this.#name }, serviceThreadId: remote.id, state });
  }

  async deserializeThread(serialized: unknown): Promise<AgentThread> {
    this.#assertUsable();
    const thread = await this.#registry.readThread(serialized);
    this.assertCompatible(thread);
    threadExecutionOptions(thread.state); // a bad option fails here, naming its path, not on a later run
    return thread;
  }

  /** Deletes the assistant thread on the service (the assistant stays). */
  async deleteThread(thread: AgentThread): Promise<void> {
    this.#assertUsable();
    this.assertCompatible(thread);
    const id = thread.serviceThreadId;
    if (id === undefined) return;
    await call(() => this.client.beta.threads.delete(id));
  }

  /** Adds a message to the thread without running the assistant. */
  async addChatMessage(thread: AgentThread, message: ChatMessage | string): Promise<void> {
    this.#assertUsable();
    this.assertCompatible(thread);
    const threadId = await this.#ensureThread(thread, undefined);
    const [m] = toMessages(message);
    await call(() => this.client.beta.threads.messages.create(threadId, toThreadMessage(m!)));
  }

  /** Every message of the thread, all pages, oldest first. */
  async getThreadMessages(thread: AgentThread, signal?: AbortSignal): Promise<ChatMessage[]> {
    this.#assertUsable();
    this.assertCompatible(thread);
    const threadId = thread.serviceThreadId;
    if (threadId === undefined) return [];
    return call(async () => {
      const out: ChatMessage[] = [];
      for await (const m of this.client.beta.threads.messages.list(threadId, { order: 'asc', limit: 100 }, { signal })) out.push(fromThreadMessage(m, this.#name));
      return out;
    }, signal);
  }

  /** Throws ThreadCompatibilityError when `thread` is not an assistant thread of this agent. */
  assertCompatible(thread: AgentThread): void {
    const made = `made by ${thread.origin.provider}${thread.origin.agent ? ` (agent "${thread.origin.agent}")` : ''}`;
    if (thread.origin.provider !== this.providerId) {
      throw new ThreadCompatibilityError(
        `Expected a thread of provider "${this.providerId}", found a thread ${made}. Continue it with an agent on ${thread.origin.provider}, or start a new thread with agent.getNewThread().`,
      );
    }
    if (thread.origin.agent !== undefined && this.#name !== undefined && thread.origin.agent !== this.#name) {
      throw new ThreadCompatibilityError(`Expected a thread of agent "${this.#name}", found a thread ${made}. Continue it with agent "${thread.origin.agent}", or start a new thread.`);
    }
    if (thread.messageStore) {
      throw new ThreadCompatibilityError(`Assistant threads are kept by the service, but this thread holds a "${thread.messageStore.type}" message store. Use a message-store agent for it.`);
    }
  }

  // ---- runs

  /** One turn: `input` is added to the thread with the run; the run is polled to its end. */
  async run(input: AgentInput, options: OpenAIAssistantRunOptions = {}): Promise<AgentRunResponse> {
    return this.#turn(toMessages(input), options);
  }

  /** Runs the assistant on the thread as it is (no new input): the ADR's "invoke". */
  async invoke(thread: AgentThread, options: Omit<OpenAIAssistantRunOptions, 'thread'> = {}): Promise<AgentRunResponse> {
    return this.#turn([], { ...options, thread });
  }

  /**
   * A cold Observable over the run's SSE stream: one run per subscription. Tool calls stop the
   * stream at requires_action; their outputs are submitted with a new stream that continues
   * the run. Unsubscribing aborts the request and cancels the remote run.
   */
  runStream(input: AgentInput, options: OpenAIAssistantRunOptions = {}): Observable<AgentRunResponseUpdate> {
    return new RxObservable<AgentRunResponseUpdate>((subscriber) => {
      const controller = ownController();
      const unlink = linkSignal(options.signal, controller);
      const live: { runId?: string; threadId?: string; done: boolean } = { done: false };
      this.#streamTurn(toMessages(input), options, controller.signal, subscriber, live).then(
        () => {
          live.done = true;
          subscriber.complete();
        },
        (error: unknown) => {
          live.done = true;
          if (!subscriber.closed) subscriber.error(error);
        },
      );
      return () => {
        unlink();
        controller.abort(new AbortError('The stream was unsubscribed; the run was cancelled.'));
        if (!live.done && live.runId && live.threadId) void this.#cancelQuietly(live.threadId, live.runId);
      };
    });
  }

  async #turn(input: ChatMessage[], options: OpenAIAssistantRunOptions): Promise<AgentRunResponse> {
    this.#assertUsable();
    const controller = ownController();
    const unlink = linkSignal(options.signal, controller);
    const signal = controller.signal;
    const throwaway = options.thread === undefined;
    const thread = options.thread ?? this.getNewThread();
    this.assertCompatible(thread);
    const release = await thread.acquire(options.concurrency ?? this.#concurrency);
    let threadId: string | undefined;
    try {
      throwIfAborted(signal);
      const context = { agent: this, thread, messages: input, options, streaming: false };
      const { response } = await this.#middleware.runAgent(context, async (messages) => {
        const assistant = await this.ensureAssistant();
        threadId = await this.#ensureThread(thread, signal);
        await this.#settleActiveRun(threadId, signal);
        const { params, tools, behavior } = this.#runParams(assistant, thread, messages, options);
        const collected: ChatMessage[] = [];
        const run = await this.#processRun(thread, threadId, params, tools, behavior.maxToolRounds, signal, (m) => collected.push(m));
        return new AgentRunResponse(collected, { responseId: run.id, conversationId: threadId, usage: usageOf(run), agentName: this.#name });
      });
      return response;
    } finally {
      unlink();
      release();
      // A throwaway thread is unreachable after the run, so it is cleaned up here.
      if (throwaway && threadId) await this.client.beta.threads.delete(threadId).catch(() => undefined);
    }
  }

  /** Polls a created run to its end, answering requires_action with the tools, emitting completed steps in order. */
  async #processRun(
    thread: AgentThread,
    threadId: string,
    params: RunCreateParams,
    tools: ReadonlyMap<string, AITool>,
    maxToolRounds: number | undefined,
    signal: AbortSignal,
    emit: (message: ChatMessage) => void,
  ): Promise<Run> {
    const runs = this.client.beta.threads.runs;
    const created = await call(() => runs.create(threadId, params, { signal }).withResponse(), signal);
    let run = created.data;
    let hint = pollHint(created.response);
    const emitted = new Set<string>();
    const results = new Map<string, FunctionResultContent>();
    const deadline = Date.now() + this.#polling.timeoutMs;
    let rounds = 0;
    try {
      for (;;) {
        while (WAITING.has(run.status)) {
          if (Date.now() >= deadline) {
            await this.#cancelQuietly(threadId, run.id);
            throw new AssistantRunTimeoutError(this.providerId, run.id, threadId, run.status, this.#polling.timeoutMs);
          }
          await sleep(hint ?? this.#polling.intervalMs, undefined, { signal });
          const polled = await runs.retrieve(run.id, { thread_id: threadId }, { signal }).withResponse();
          run = polled.data;
          hint = pollHint(polled.response);
        }
        if (FAILED.has(run.status)) throw this.#runError(run);
        await this.#emitSteps(run, emitted, results, signal, emit);
        if (run.status === 'completed') return run;
        // requires_action: every requested call runs, all outputs go back in one call.
        const calls = requiredCalls(run);
        rounds++;
        const outputs =
          maxToolRounds !== undefined && rounds > maxToolRounds
            ? calls.map((c) => notRun(c, `not run: the limit of ${maxToolRounds} tool rounds for one run was reached.`))
            : await this.#invokeTools(calls, tools, thread, signal);
        for (const r of outputs) results.set(r.callId, r);
        const submitted = await runs
          .submitToolOutputs(run.id, { thread_id: threadId, tool_outputs: outputs.map((r) => ({ tool_call_id: r.callId, output: outputText(r) })) }, { signal })
          .withResponse();
        run = submitted.data;
        hint = pollHint(submitted.response);
      }
    } catch (error) {
      if (signal.aborted) {
        await this.#cancelQuietly(threadId, run.id);
        throw new AbortError(`The run was aborted; remote run ${run.id} was cancelled.`, { cause: error });
      }
      throw toSkeinError(this.providerId, error, signal);
    }
  }

  /** Completed steps not yet emitted, oldest first: tool steps as call + result messages, message steps as the message. */
  async #emitSteps(
    run: Run,
    emitted: Set<string>,
    results: Map<string, FunctionResultContent>,
    signal: AbortSignal,
    emit: (message: ChatMessage) => void,
  ): Promise<void> {
    const threadId = run.thread_id;
    for await (const step of this.client.beta.threads.runs.steps.list(run.id, { thread_id: threadId, order: 'asc', limit: 100 }, { signal })) {
      if (step.status !== 'completed' || emitted.has(step.id)) continue;
      emitted.add(step.id);
      const details = step.step_details;
      if (details.type === 'message_creation') {
        const message = await this.client.beta.threads.messages.retrieve(details.message_creation.message_id, { thread_id: threadId }, { signal });
        emit(fromThreadMessage(message, this.#name));
        continue;
      }
      const calls: FunctionCallContent[] = [];
      const outs: FunctionResultContent[] = [];
      for (const c of details.tool_calls) {
        if (c.type !== 'function') continue;
        calls.push({ kind: 'function-call', callId: c.id, name: c.function.name, arguments: c.function.arguments });
        outs.push(results.get(c.id) ?? { kind: 'function-result', callId: c.id, result: c.function.output ?? null });
      }
      if (!calls.length) continue;
      const at = new Date(step.created_at * 1000).toISOString();
      emit(this.#authored({ role: 'assistant', contents: calls, messageId: step.id, createdAt: at }));
      emit({ role: 'tool', contents: outs, createdAt: at });
    }
  }

  async #streamTurn(
    input: ChatMessage[],
    options: OpenAIAssistantRunOptions,
    signal: AbortSignal,
    subscriber: Subscriber<AgentRunResponseUpdate>,
    live: { runId?: string; threadId?: string },
  ): Promise<void> {
    this.#assertUsable();
    const throwaway = options.thread === undefined;
    const thread = options.thread ?? this.getNewThread();
    this.assertCompatible(thread);
    const release = await thread.acquire(options.concurrency ?? this.#concurrency);
    const next = (update: AgentRunResponseUpdate) => {
      if (!subscriber.closed) subscriber.next(update);
    };
    try {
      throwIfAborted(signal);
      const context = { agent: this, thread, messages: input, options, streaming: true };
      const streamRun = (messages: ChatMessage[]) =>
        this.#streamRun(thread, messages, options, signal, live, next).catch((error: unknown) => {
          if (signal.aborted) throw new AbortError(undefined, { cause: error });
          throw toSkeinError(this.providerId, error, signal);
        });
      await this.#middleware.runAgent(context, streamRun, next);
    } catch (error) {
      // A middleware's own error passes as it is, unless the caller aborted.
      if (signal.aborted && !(error instanceof AbortError)) throw new AbortError(undefined, { cause: error });
      throw error;
    } finally {
      release();
      if (throwaway && live.threadId) {
        const id = live.threadId;
        if (live.runId && signal.aborted) await this.#cancelQuietly(id, live.runId);
        await this.client.beta.threads.delete(id).catch(() => undefined);
      }
    }
  }

  /** One streamed run to its end; resolves with what it streamed, folded (for run middleware). */
  async #streamRun(
    thread: AgentThread,
    input: ChatMessage[],
    options: OpenAIAssistantRunOptions,
    signal: AbortSignal,
    live: { runId?: string; threadId?: string },
    emit: (update: AgentRunResponseUpdate) => void,
  ): Promise<AgentRunResponse> {
    const updates: AgentRunResponseUpdate[] = [];
    const next = (update: AgentRunResponseUpdate) => {
      updates.push(update);
      emit(update);
    };
    const folded = () => {
      const { messages, usage } = responseFromUpdates(updates);
      return new AgentRunResponse(messages.map((m) => this.#authored(m)), { responseId: live.runId, conversationId: live.threadId, usage, agentName: this.#name });
    };
    const assistant = await this.ensureAssistant();
    const threadId = await this.#ensureThread(thread, signal);
    live.threadId = threadId;
    await this.#settleActiveRun(threadId, signal);
    const { params, tools, behavior } = this.#runParams(assistant, thread, input, options);
    const runs = this.client.beta.threads.runs;
    let stream: AsyncIterable<StreamEvent> = await runs.create(threadId, { ...params, stream: true }, { signal });
    let rounds = 0;
    for (;;) {
      let requires: Run | undefined;
      let completed = false;
      for await (const event of stream) {
        if (signal.aborted) break;
        const outcome = this.#onStreamEvent(event, live, next);
        if (outcome === 'requires_action') requires = event.data as Run;
        if (outcome === 'completed') completed = true;
      }
      throwIfAborted(signal);
      if (!requires && !completed) {
        // A stream cut short (or a reply that was no event stream) must not pass for a finished turn.
        throw new ConnectionError(this.providerId, `The ${this.providerId} run stream on thread ${threadId} ended before the run did (no completed, requires_action or failure event).`);
      }
      if (!requires) return folded();
      const calls = requiredCalls(requires);
      next({ text: '', role: 'assistant', contents: calls, responseId: requires.id, ...(this.#name ? { authorName: this.#name } : {}) });
      rounds++;
      const outputs =
        behavior.maxToolRounds !== undefined && rounds > behavior.maxToolRounds
          ? calls.map((c) => notRun(c, `not run: the limit of ${behavior.maxToolRounds} tool rounds for one run was reached.`))
          : await this.#invokeTools(calls, tools, thread, signal);
      next({ text: '', role: 'tool', contents: outputs, responseId: requires.id });
      stream = await runs.submitToolOutputs(
        requires.id,
        { thread_id: threadId, stream: true, tool_outputs: outputs.map((r) => ({ tool_call_id: r.callId, output: outputText(r) })) },
        { signal },
      );
    }
  }

  /** Runs the requested calls (each through the function-call middleware); unknown tools are answered as not run. */
  async #invokeTools(calls: FunctionCallContent[], tools: ReadonlyMap<string, AITool>, thread: AgentThread, signal: AbortSignal): Promise<FunctionResultContent[]> {
    const results = await Promise.all(
      calls.map((call) => {
        const tool = tools.get(call.name);
        if (!tool) return notRun(call, `unknown tool "${call.name}"; available tools: ${[...tools.keys()].join(', ') || 'none'}.`);
        return this.#middleware.callTool({ agent: this, thread, call, tool }, () => tool.invoke({ call, signal, thread }));
      }),
    );
    throwIfAborted(signal);
    return results;
  }

  /** Translates one SSE event; throws on a failed run; says when the run waits for tool outputs. */
  #onStreamEvent(event: StreamEvent, live: { runId?: string }, next: (u: AgentRunResponseUpdate) => void): 'requires_action' | 'completed' | undefined {
    switch (event.event) {
      case 'thread.run.created':
        live.runId = event.data.id;
        return undefined;
      case 'thread.message.delta':
        for (const part of event.data.delta.content ?? []) {
          if (part.type !== 'text' || !part.text?.value) continue;
          // Citations arrive on the delta that completes their marker; offsets are into the whole message.
          const annotations = annotationsJson(part.text.annotations);
          const content: AIContent = annotations.length ? { kind: 'text', text: part.text.value, additionalProperties: { annotations } } : { kind: 'text', text: part.text.value };
          next({ text: part.text.value, role: 'assistant', contents: [content], messageId: event.data.id, responseId: live.runId, ...(this.#name ? { authorName: this.#name } : {}) });
        }
        return undefined;
      case 'thread.run.step.delta': {
        const details = event.data.delta.step_details;
        if (details?.type !== 'tool_calls') return undefined;
        for (const c of details.tool_calls ?? []) {
          if (c.type !== 'function') continue;
          next({ text: '', role: 'assistant', contents: [], responseId: live.runId, toolCallDelta: { index: c.index, callId: c.id, name: c.function?.name ?? undefined, argumentsDelta: c.function?.arguments ?? '' } });
        }
        return undefined;
      }
      case 'thread.run.requires_action':
        return 'requires_action';
      case 'thread.run.completed': {
        const usage = usageOf(event.data);
        if (usage) next({ text: '', contents: [{ kind: 'usage', usage }], responseId: event.data.id });
        return 'completed';
      }
      case 'thread.run.failed':
      case 'thread.run.cancelled':
      case 'thread.run.expired':
      case 'thread.run.incomplete':
        throw this.#runError(event.data);
      default:
        return undefined;
    }
  }

  #runParams(assistant: OpenAIAssistantDefinition, thread: AgentThread, input: ChatMessage[], options: OpenAIAssistantRunOptions) {
    const invocation = options.invocationOptions ?? {};
    // Precedence: invocation > thread > assistant.
    const merged: OpenAIAssistantExecutionOptions = mergeExecutionOptions(assistant.executionOptions, threadExecutionOptions(thread.state), invocation);
    const extra = [...input, ...(invocation.additionalMessages ?? [])];
    const system = extra.filter((m) => m.role === 'system').map(messageText);
    const additional = [merged.additionalInstructions, ...system].filter((s): s is string => !!s);
    const tools = options.tools?.length ? new Map([...this.#tools, ...toolMap(options.tools)]) : this.#tools;
    const params: RunCreateParams = {
      assistant_id: assistant.id!,
      model: invocation.model,
      instructions: invocation.instructions,
      additional_instructions: additional.length ? additional.join('\n') : undefined,
      additional_messages: extra.filter((m) => m.role !== 'system').map(toThreadMessage),
      max_prompt_tokens: merged.maxPromptTokens,
      max_completion_tokens: merged.maxCompletionTokens,
      parallel_tool_calls: merged.parallelToolCalls,
      truncation_strategy: merged.truncationMessageCount ? { type: 'last_messages', last_messages: merged.truncationMessageCount } : undefined,
      temperature: merged.temperature,
      top_p: merged.topP,
      metadata: invocation.metadata,
      tool_choice: toolChoice(merged.toolCallBehavior?.toolChoice),
    };
    // Run-scoped tools replace the assistant's tool list for this run only.
    if (options.tools?.length || invocation.enableCodeInterpreter !== undefined || invocation.enableFileSearch !== undefined) {
      params.tools = [
        ...hostedTools(invocation.enableCodeInterpreter ?? assistant.enableCodeInterpreter, invocation.enableFileSearch ?? assistant.enableFileSearch),
        ...[...tools.values()].map((t) => functionTool(t.declaration)),
      ];
    }
    for (const key of Object.keys(params) as (keyof RunCreateParams)[]) if (params[key] === undefined) delete params[key];
    return { params, tools, behavior: merged.toolCallBehavior ?? {} };
  }

  /** The assistant thread id, creating the remote thread on a thread's first run. */
  async #ensureThread(thread: AgentThread, signal: AbortSignal | undefined): Promise<string> {
    if (thread.serviceThreadId !== undefined) return thread.serviceThreadId;
    const remote = await call(() => this.client.beta.threads.create({}, { signal }), signal);
    thread.setServiceThreadId(remote.id);
    return remote.id;
  }

  /**
   * A thread takes one run at a time. A run still queued or in progress (another process's turn)
   * is waited for; one stuck in requires_action has nobody to answer it, so it is cancelled.
   */
  async #settleActiveRun(threadId: string, signal: AbortSignal): Promise<void> {
    const runs = this.client.beta.threads.runs;
    const page = await call(() => runs.list(threadId, { limit: 1, order: 'desc' }, { signal }), signal);
    let run = page.data[0];
    if (!run || !(WAITING.has(run.status) || run.status === 'requires_action')) return;
    const deadline = Date.now() + this.#polling.timeoutMs;
    while (run.status === 'requires_action' || WAITING.has(run.status)) {
      if (run.status === 'requires_action') run = await call(() => runs.cancel(run!.id, { thread_id: threadId }, { signal }), signal);
      if (!WAITING.has(run.status)) break;
      if (Date.now() >= deadline) throw new AssistantRunTimeoutError(this.providerId, run.id, threadId, run.status, this.#polling.timeoutMs);
      await sleep(this.#polling.intervalMs, undefined, { signal }).catch((e: unknown) => {
        throw new AbortError(undefined, { cause: e });
      });
      run = await call(() => runs.retrieve(run!.id, { thread_id: threadId }, { signal }), signal);
    }
  }

  async #cancelQuietly(threadId: string, runId: string): Promise<void> {
    // Best effort: the run may have ended meanwhile; the caller's error is what matters.
    await this.client.beta.threads.runs.cancel(runId, { thread_id: threadId }).catch(() => undefined);
  }

  #runError(run: Run): AssistantRunError {
    const lastError = run.last_error ? { code: run.last_error.code, message: run.last_error.message } : run.incomplete_details ? { message: `incomplete: ${run.incomplete_details.reason}` } : undefined;
    return new AssistantRunError(this.providerId, run.id, run.thread_id, run.status, lastError);
  }

  #authored(message: ChatMessage): ChatMessage {
    return this.#name !== undefined && message.authorName === undefined ? { ...message, authorName: this.#name } : message;
  }

  #assertUsable(): void {
    if (this.#deleted) {
      throw new AssistantDeletedError(`Assistant ${this.#definition.id ?? '(never created)'} was deleted; this agent cannot be used any more. Create or retrieve another assistant.`);
    }
  }
}

// ---- helpers

/**
 * The SDK adds an abort listener to the request signal per call and a long poll makes many
 * calls: each turn gets its own signal (the caller's linked in once) with no listener limit.
 */
function ownController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

async function call<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toSkeinError(OPENAI_ASSISTANTS_CLIENT_ID, error, signal);
  }
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new AbortError(undefined, { cause: signal.reason });
}

function pollHint(response: Response): number | undefined {
  const value = Number.parseInt(response.headers.get('openai-poll-after-ms') ?? '', 10);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
}

function requiredCalls(run: Run): FunctionCallContent[] {
  return (run.required_action?.submit_tool_outputs.tool_calls ?? []).map((c) => ({ kind: 'function-call', callId: c.id, name: c.function.name, arguments: c.function.arguments }));
}

function notRun(c: FunctionCallContent, error: string): FunctionResultContent {
  return { kind: 'function-result', callId: c.callId, error };
}

function outputText(result: FunctionResultContent): string {
  if (result.error !== undefined) return `Error: ${result.error}`;
  return typeof result.result === 'string' ? result.result : JSON.stringify(result.result ?? null);
}

function toolChoice(choice: OpenAIAssistantToolCallBehavior['toolChoice']): RunCreateParams['tool_choice'] {
  if (choice === undefined) return undefined;
  if (typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}

function usageOf(run: Run): UsageDetails | undefined {
  if (!run.usage) return undefined;
  return addUsage(undefined, { inputTokens: run.usage.prompt_tokens, outputTokens: run.usage.completion_tokens, totalTokens: run.usage.total_tokens });
}

function messageText(message: ChatMessage): string {
  return message.contents.map((c) => (c.kind === 'text' ? c.text : '')).join('');
}

function toThreadMessage(message: ChatMessage): OpenAI.Beta.Threads.Messages.MessageCreateParams {
  if (message.role !== 'user' && message.role !== 'assistant') {
    throw new SkeinError(`Assistant threads take user and assistant messages; got a "${message.role}" message. Put system text in invocationOptions.additionalInstructions.`);
  }
  return { role: message.role, content: messageText(message) };
}

/**
 * A thread message -> a Skein message; annotations (file citations, file paths) ride along on
 * the text as `additionalProperties.annotations` (plain JSON, see OpenAIAssistantAnnotation).
 */
export function fromThreadMessage(message: OpenAI.Beta.Threads.Message, agentName?: string): ChatMessage {
  const contents: AIContent[] = [];
  for (const part of message.content) {
    if (part.type === 'text') {
      const annotations = annotationsJson(part.text.annotations);
      contents.push(annotations.length ? { kind: 'text', text: part.text.value, additionalProperties: { annotations } } : { kind: 'text', text: part.text.value });
    } else if (part.type === 'image_file') {
      contents.push({ kind: 'uri', uri: `openai-file:${part.image_file.file_id}` });
    } else if (part.type === 'image_url') {
      contents.push({ kind: 'uri', uri: part.image_url.url });
    }
  }
  const out: ChatMessage = { role: message.role, contents, messageId: message.id, createdAt: new Date(message.created_at * 1000).toISOString() };
  if (message.role === 'assistant' && agentName !== undefined) out.authorName = agentName;
  return out;
}

