import type OpenAI from 'openai';
// The declarations name rxjs's public Observable type; the class comes from its own module.
import type { Observable } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import {
  AbortError,
  type AgentMiddleware,
  type AgentRunResponse,
  type AgentRunResponseUpdate,
  type AgentThread,
  AIAgent,
  type AgentInput,
  collapseToToolResultsNotes,
  type ChatMessage,
  type ForkThreadOptions,
  forkCount,
  forkedThreadState,
  type GetMessagesOptions,
  pageMessages,
  type SerializationRegistry,
  ThreadCompatibilityError,
  type ThreadConcurrency,
  type AITool,
  linkSignal,
  MiddlewarePipeline,
  toMessages,
  toolMap,
  defaultSerializationRegistry,
} from 'skein';
import { call, OPENAI_ASSISTANTS_CLIENT_ID, ownController } from './openai-assistant-calls.js';
import {
  assistantCreateParams,
  definitionFromAssistant,
  type OpenAIAssistantDefinition,
  type OpenAIThreadCreationOptions,
  parseExecutionOptions,
  readThreadState,
  THREAD_STATE_KEY,
  threadExecutionOptions,
  updateThreadState,
} from './openai-assistant-definition.js';
import { AssistantDeletedError } from './openai-assistant-errors.js';
import { assistantsOfThisDefinition, provisionAssistant } from './openai-assistant-provisioning.js';
import {
  createVectorStore,
  deleteFile,
  deleteVectorStore,
  type OpenAIFileUpload,
  type OpenAIUploadedFile,
  type OpenAIVectorStore,
  type OpenAIVectorStoreCreationOptions,
  uploadFile,
} from './openai-assistant-files.js';
import { AssistantRunProcessor, type LiveRun, type OpenAIAssistantRunOptions } from './openai-assistant-run-processor.js';
import { AssistantThreadOperations, type OpenAIAssistantPollingOptions } from './openai-assistant-threads.js';
import { clientFrom, type OpenAIServiceConfiguration } from './openai-service-configuration.js';

export { OPENAI_ASSISTANTS_CLIENT_ID } from './openai-assistant-calls.js';
export { fromThreadMessage } from './openai-assistant-messages.js';
export type { OpenAIAssistantRunOptions } from './openai-assistant-run-processor.js';
export type { OpenAIAssistantPollingOptions } from './openai-assistant-threads.js';

export interface OpenAIAssistantAgentOptions {
  client: OpenAI | OpenAIServiceConfiguration;
  /**
   * With an `id`, the agent uses that assistant. Without, on first use it finds the assistant
   * this definition made before (in any process: by name and fingerprint in the assistant's
   * metadata), updates it when the definition changed, and creates one only when none exists.
   */
  definition: OpenAIAssistantDefinition;
  /** `false`: without an id, always create a new assistant (what `create` does). Default true. */
  reuse?: boolean;
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

const DEFAULT_INTERVAL_MS = 500;
const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/**
 * An AIAgent backed by an OpenAI assistant (Assistants v2). History lives in the service's
 * thread: an AgentThread's `serviceThreadId` is the assistant thread id. Each turn is a run,
 * polled (or streamed) to its end; function tool calls run through the Skein tools. Thread
 * operations live in AssistantThreadOperations, run processing in AssistantRunProcessor.
 */
export class OpenAIAssistantAgent extends AIAgent {
  readonly client: OpenAI;
  readonly providerId = OPENAI_ASSISTANTS_CLIENT_ID;
  readonly #tools: ReadonlyMap<string, AITool>;
  readonly #registry: SerializationRegistry;
  readonly #name: string | undefined;
  readonly #threads: AssistantThreadOperations;
  readonly #runs: AssistantRunProcessor;
  #definition: OpenAIAssistantDefinition;
  #ensuring: Promise<OpenAIAssistantDefinition> | undefined;
  #deleted = false;
  #loaded: boolean;
  readonly #reuse: boolean;

  constructor(options: OpenAIAssistantAgentOptions) {
    super();
    if (!options?.client) throw new TypeError('OpenAIAssistantAgent needs a client: an OpenAI SDK client or an OpenAIServiceConfiguration.');
    if (!options.definition?.model && !options.definition?.id) throw new TypeError('OpenAIAssistantAgent needs definition.id (an existing assistant) or definition.model (to create one).');
    this.client = clientFrom(options.client);
    this.#definition = { ...options.definition };
    this.#loaded = options.definitionIsRemote === true;
    this.#reuse = options.reuse !== false;
    this.#name = options.name ?? options.definition.name;
    this.#tools = toolMap(options.tools ?? []);
    const polling = { intervalMs: options.polling?.intervalMs ?? DEFAULT_INTERVAL_MS, timeoutMs: options.polling?.timeoutMs ?? DEFAULT_TIMEOUT_MS };
    this.#registry = options.serializationRegistry ?? defaultSerializationRegistry();
    this.#threads = new AssistantThreadOperations(this.client, this.#name, polling);
    this.#runs = new AssistantRunProcessor({
      agent: this,
      client: this.client,
      name: this.#name,
      tools: this.#tools,
      polling,
      concurrency: options.concurrency ?? 'queue',
      // Only the two kinds that apply are taken (a container's chat-client contributions are not).
      middleware: new MiddlewarePipeline({ agentRun: options.middleware?.agentRun, functionCall: options.middleware?.functionCall }),
      threads: this.#threads,
      ensureAssistant: () => this.ensureAssistant(),
      throwawayThread: () => this.getNewThread(),
      checkThread: (thread) => this.#checkThread(thread),
    });
    if (this.#definition.executionOptions) parseExecutionOptions(this.#definition.executionOptions, 'definition.executionOptions');
  }

  // ---- lifecycle (static)

  /** Creates the assistant on the service and returns its agent. */
  static async create(
    client: OpenAI | OpenAIServiceConfiguration,
    definition: OpenAIAssistantDefinition,
    options: Omit<OpenAIAssistantAgentOptions, 'client' | 'definition'> = {},
  ): Promise<OpenAIAssistantAgent> {
    const agent = new OpenAIAssistantAgent({ ...options, client, definition: { ...definition, id: undefined }, reuse: false });
    await agent.ensureAssistant();
    return agent;
  }

  /**
   * The agent of a definition, idempotently: finds the assistant this definition made (in this
   * or any other process), updates it when the definition changed, creates it only when none
   * exists. Run it in every process; they all share one assistant. `agent.delete()` removes it.
   *
   * @example
   * const agent = await OpenAIAssistantAgent.fromDefinition(new OpenAI(), { model: 'gpt-4o-mini', name: 'support', instructions: 'Be brief.' }, { tools: [weather] });
   * const answer = await agent.run('Weather in Oslo?', { thread: agent.getNewThread() });
   */
  static async fromDefinition(
    client: OpenAI | OpenAIServiceConfiguration,
    definition: OpenAIAssistantDefinition,
    options: Omit<OpenAIAssistantAgentOptions, 'client' | 'definition' | 'reuse'> = {},
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
      const declarations = [...this.#tools.values()].map((t) => t.declaration);
      const created = this.#reuse
        ? await provisionAssistant(this.client, this.#definition, declarations)
        : await this.client.beta.assistants.create(assistantCreateParams(this.#definition, declarations));
      this.#definition = definitionFromAssistant(created);
      this.#loaded = true;
      return this.#definition;
    }).catch((error: unknown) => {
      this.#ensuring = undefined;
      throw error;
    });
    return this.#ensuring;
  }

  /**
   * Deletes the assistant; the agent is then terminal (every further call throws
   * AssistantDeletedError). An agent of a definition not used yet deletes the assistant(s) this
   * definition made, found as on first use; the next process using the definition creates a new one.
   */
  async delete(): Promise<void> {
    this.#assertUsable();
    const ids = this.#definition.id ? [this.#definition.id] : this.#reuse ? await this.#definitionAssistantIds() : [];
    for (const id of ids) await call(() => this.client.beta.assistants.delete(id));
    this.#deleted = true;
  }

  async #definitionAssistantIds(): Promise<string[]> {
    const found = await assistantsOfThisDefinition(this.client, this.#definition, [...this.#tools.values()].map((t) => t.declaration));
    return found.map((a) => a.id);
  }

  // ---- threads

  /** A new, unstarted thread; the assistant thread is created on its first run. */
  getNewThread(): AgentThread {
    this.#assertUsable();
    return this.#threads.newThread();
  }

  /** Creates the assistant thread now, with its own messages, metadata, tool resources and run defaults. */
  async createThread(options: OpenAIThreadCreationOptions = {}, signal?: AbortSignal): Promise<AgentThread> {
    this.#assertUsable();
    return this.#threads.create(options, signal, this.#definition.id);
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
    this.#checkThread(thread);
    await this.#threads.delete(thread);
  }

  /** Adds a message to the thread without running the assistant. */
  async addChatMessage(thread: AgentThread, message: ChatMessage | string): Promise<void> {
    this.#checkThread(thread);
    await this.#threads.addMessage(thread, message);
  }

  /** Every message of the thread, all pages, oldest first. */
  async getThreadMessages(thread: AgentThread, signal?: AbortSignal): Promise<ChatMessage[]> {
    this.#checkThread(thread);
    return this.#threads.messages(thread, signal);
  }

  /** The thread's messages (every page), oldest first, with `limit` / `before` paging. */
  override async getMessages(thread: AgentThread, options: GetMessagesOptions = {}): Promise<ChatMessage[]> {
    return pageMessages(await this.getThreadMessages(thread, options.signal), options);
  }

  /**
   * A new assistant thread seeded with the messages up to and including `at` (text, images and
   * attached files, by file id: the files are shared, not copied). Run steps (tool calls) are not
   * messages, so they are not copied, but the calls and results history reads from a tool results
   * note go back into one (the fork's runs read them as the origin's did); a turn the thread's newest
   * run has not finished (waiting for tool outputs or an approval) is never copied: the fork ends before it. The fork keeps the origin's run defaults and assistant; the
   * files Skein uploaded for the origin stay the origin's (deleting the fork leaves them).
   */
  override async forkThread(thread: AgentThread, options: ForkThreadOptions = {}): Promise<AgentThread> {
    this.#checkThread(thread);
    const release = await thread.acquire('queue');
    try {
      const messages = await this.#threads.messages(thread, options.signal);
      let count = forkCount(messages, options.at);
      if (count > 0 && thread.serviceThreadId !== undefined) count = Math.min(count, await this.#threads.finishedCount(thread.serviceThreadId, messages, options.signal));
      const { executionOptions, assistantId } = readThreadState(thread.state);
      const fork = await this.#threads.create({ messages: collapseToToolResultsNotes(messages.slice(0, count)) }, options.signal, assistantId ?? this.#definition.id);
      // Other state (an app's, context providers') goes with the fork as with any agent's; of this agent's own, the run defaults only (uploaded files stay the origin's).
      const { [THREAD_STATE_KEY]: _own, ...others } = forkedThreadState(thread.state, count);
      fork.state = { ...others, ...fork.state };
      if (executionOptions) updateThreadState(fork, { executionOptions });
      return fork;
    } finally {
      release();
    }
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
      const live: LiveRun & { done: boolean } = { done: false };
      (async () => {
        this.#assertUsable();
        await this.#runs.streamTurn(toMessages(input), options, controller.signal, subscriber, live);
      })().then(
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
        if (!live.done && live.runId && live.threadId) void this.#runs.cancelQuietly(live.threadId, live.runId);
      };
    });
  }

  async #turn(input: ChatMessage[], options: OpenAIAssistantRunOptions): Promise<AgentRunResponse> {
    this.#assertUsable();
    const controller = ownController();
    const unlink = linkSignal(options.signal, controller);
    try {
      return await this.#runs.turn(input, options, controller.signal);
    } finally {
      unlink();
    }
  }

  #checkThread(thread: AgentThread): void {
    this.#assertUsable();
    this.assertCompatible(thread);
  }

  #assertUsable(): void {
    if (this.#deleted) {
      throw new AssistantDeletedError(`Assistant ${this.#definition.id ?? '(never created)'} was deleted; this agent cannot be used any more. Create or retrieve another assistant.`);
    }
  }
}

