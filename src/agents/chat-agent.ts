import { Observable } from 'rxjs';
import type { ChatClient } from '../clients/chat-client.js';
import { type ChatOptions, mergeChatOptions } from '../clients/chat-options.js';
import { type ChatResponse, type ChatResponseUpdate, responseFromUpdates } from '../clients/chat-response.js';
import { AbortError, SkeinError, ThreadCompatibilityError } from '../errors/skein-error.js';
import { type AgentInput, type ChatMessage, toMessages } from '../messages/chat-message.js';
import { isText } from '../messages/content.js';
import { type SerializationRegistry, SerializationRegistryImpl } from '../serialization/serialization-registry.js';
import type { AgentThread, ThreadConcurrency } from '../threads/agent-thread.js';
import type { ChatMessageStoreFactory } from '../threads/chat-message-store.js';
import type { ChatReducer } from '../threads/chat-reducer.js';
import { InMemoryChatMessageStoreFactory } from '../threads/in-memory-chat-message-store.js';
import { DefaultThreadFactory, type ThreadFactory } from '../threads/thread-factory.js';
import type { AITool } from '../tools/ai-tool.js';
import { AIAgent, type AgentRunOptions } from './ai-agent.js';
import { AgentRunResponse, type AgentRunResponseUpdate } from './agent-run-response.js';
import { type CallModel, type FunctionLoopResult, runFunctionLoop, throwIfAborted } from './function-invocation-loop.js';

export interface ChatAgentOptions {
  chatClient: ChatClient;
  /** Recorded as `authorName` on the agent's messages and in the threads it makes. */
  name?: string;
  description?: string;
  instructions?: string;
  tools?: readonly AITool[];
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
  /** Shrinks a store thread's history before each run (the stored history is unchanged). */
  chatReducer?: ChatReducer;
}

const DEFAULT_MAX_TOOL_ITERATIONS = 8;
let sharedRegistry: SerializationRegistry | undefined;

/** An agent over any ChatClient: instructions, tools, threads of the client's kind. */
export class ChatAgent extends AIAgent {
  readonly name: string | undefined;
  readonly description: string | undefined;
  readonly chatClient: ChatClient;
  readonly instructions: string | undefined;
  readonly #tools: ReadonlyMap<string, AITool>;
  readonly #chatOptions: ChatOptions | undefined;
  readonly #storeFactory: ChatMessageStoreFactory;
  readonly #threadFactory: ThreadFactory;
  readonly #registry: SerializationRegistry;
  readonly #maxToolIterations: number;
  readonly #concurrency: ThreadConcurrency;
  readonly #reducer: ChatReducer | undefined;

  constructor(options: ChatAgentOptions) {
    super();
    if (!options?.chatClient) throw new TypeError('ChatAgent needs a chatClient, e.g. new ChatAgent({ chatClient: new OpenAIChatClient({ ... }) }).');
    this.chatClient = options.chatClient;
    this.name = options.name;
    this.description = options.description;
    this.instructions = options.instructions;
    this.#tools = toolMap(options.tools ?? []);
    this.#chatOptions = options.chatOptions;
    this.#storeFactory = options.chatMessageStoreFactory ?? new InMemoryChatMessageStoreFactory();
    this.#threadFactory = options.threadFactory ?? new DefaultThreadFactory();
    this.#registry = options.serializationRegistry ?? (sharedRegistry ??= SerializationRegistryImpl.withDefaults());
    this.#maxToolIterations = options.maxToolIterations ?? DEFAULT_MAX_TOOL_ITERATIONS;
    this.#concurrency = options.concurrency ?? 'queue';
    this.#reducer = options.chatReducer;
  }

  get tools(): AITool[] {
    return [...this.#tools.values()];
  }

  getNewThread(): AgentThread {
    return this.#threadFactory.createThread({
      provider: this.chatClient.providerId,
      agent: this.name,
      threadKind: this.chatClient.threadKind,
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
    if (thread.messageStore) return thread.messageStore.clear();
    if (thread.serviceThreadId === undefined) return;
    if (!this.chatClient.deleteServiceThread) {
      throw new SkeinError(`The "${this.chatClient.providerId}" client cannot delete service threads.`);
    }
    await this.chatClient.deleteServiceThread(thread.serviceThreadId);
  }

  async run(input: AgentInput, options: AgentRunOptions = {}): Promise<AgentRunResponse> {
    const signal = options.signal ?? new AbortController().signal;
    const callModel: CallModel = (messages, chatOptions) => this.chatClient.getResponse(messages, chatOptions);
    return this.#runOnThread(input, options, signal, callModel);
  }

  runStream(input: AgentInput, options: AgentRunOptions = {}): Observable<AgentRunResponseUpdate> {
    return new Observable<AgentRunResponseUpdate>((subscriber) => {
      const controller = new AbortController();
      const unlink = linkSignal(options.signal, controller);
      const emit = (update: ChatResponseUpdate) => {
        if (!subscriber.closed) subscriber.next(this.#toAgentUpdate(update));
      };
      const callModel: CallModel = (messages, chatOptions) =>
        collectStream(this.chatClient.getStreamingResponse(messages, chatOptions), emit, controller.signal);
      const onToolResults = (message: ChatMessage) => emit({ role: 'tool', contents: message.contents });
      this.#runOnThread(input, options, controller.signal, callModel, onToolResults).then(
        () => subscriber.complete(),
        (error: unknown) => {
          if (!subscriber.closed) subscriber.error(error);
        },
      );
      return () => {
        unlink();
        controller.abort(new AbortError('The stream was unsubscribed; the thread is unchanged.'));
      };
    });
  }

  /** Throws ThreadCompatibilityError when `thread` cannot be continued by this agent. */
  assertCompatible(thread: AgentThread): void {
    const provider = this.chatClient.providerId;
    const made = `made by ${thread.origin.provider}${thread.origin.agent ? ` (agent "${thread.origin.agent}")` : ''}`;
    if (thread.origin.provider !== provider) {
      throw new ThreadCompatibilityError(
        `Expected a thread of provider "${provider}", found a thread ${made}. Continue it with an agent on ${thread.origin.provider}, or start a new thread with agent.getNewThread().`,
      );
    }
    if (thread.origin.agent !== undefined && this.name !== undefined && thread.origin.agent !== this.name) {
      throw new ThreadCompatibilityError(
        `Expected a thread of agent "${this.name}", found a thread ${made}. Continue it with agent "${thread.origin.agent}", or start a new thread.`,
      );
    }
    const kind = this.chatClient.threadKind;
    if (thread.serviceThreadId !== undefined && kind === 'message-store') {
      throw new ThreadCompatibilityError(
        `The "${provider}" client keeps history in a message store, but this thread holds service thread id "${thread.serviceThreadId}". Use an agent of the service that owns that id.`,
      );
    }
    if (thread.messageStore !== undefined && kind === 'service') {
      throw new ThreadCompatibilityError(
        `The "${provider}" client keeps history on the service, but this thread holds a "${thread.messageStore.type}" message store. Use a message-store agent for it, or start a new thread.`,
      );
    }
  }

  async #runOnThread(
    input: AgentInput,
    options: AgentRunOptions,
    signal: AbortSignal,
    callModel: CallModel,
    onToolResults?: (message: ChatMessage) => void,
  ): Promise<AgentRunResponse> {
    const thread = options.thread ?? this.getNewThread();
    this.assertCompatible(thread);
    const inputMessages = stamp(toMessages(input));
    const release = await thread.acquire(options.concurrency ?? this.#concurrency);
    try {
      throwIfAborted(signal);
      const stored = thread.messageStore ? await thread.messageStore.listMessages() : [];
      const history = this.#reducer && stored.length > 0 ? await this.#reducer.reduce(stored) : stored;
      const result = await runFunctionLoop({
        callModel,
        history,
        input: inputMessages,
        options: this.#chatOptionsFor(thread, options, signal),
        serviceManaged: thread.messageStore === undefined && this.chatClient.threadKind !== 'message-store',
        tools: options.tools?.length ? new Map([...this.#tools, ...toolMap(options.tools)]) : this.#tools,
        maxIterations: options.maxToolIterations ?? this.#maxToolIterations,
        signal,
        thread,
        onMessages: (messages, fromModel) => {
          if (!fromModel) onToolResults?.(messages[0]!);
        },
      });
      const produced = this.#authored(result.messages);
      throwIfAborted(signal);
      await this.#commit(thread, inputMessages, produced, result);
      return new AgentRunResponse(produced, {
        responseId: result.responseId,
        conversationId: result.conversationId,
        usage: result.usage,
        agentName: this.name,
      });
    } catch (error) {
      if (signal.aborted && !(error instanceof AbortError)) throw new AbortError(undefined, { cause: error });
      throw error;
    } finally {
      release();
    }
  }

  #chatOptionsFor(thread: AgentThread, options: AgentRunOptions, signal: AbortSignal): ChatOptions {
    const tools = options.tools?.length ? [...this.#tools.values(), ...options.tools] : [...this.#tools.values()];
    return mergeChatOptions(
      { instructions: this.instructions },
      this.#chatOptions,
      options.chatOptions,
      {
        tools: tools.length ? tools.map((t) => t.declaration) : undefined,
        conversationId: thread.serviceThreadId,
        signal,
      },
      thread.state.continuation ? { additionalProperties: { continuation: thread.state.continuation } } : undefined,
    );
  }

  /**
   * One turn lands once: the input and every produced message appended together, or the
   * service id recorded. A store thread stays a store thread: a conversation id the service
   * returns for it is not adopted, since that would split the history in two places.
   */
  async #commit(thread: AgentThread, input: ChatMessage[], produced: ChatMessage[], result: FunctionLoopResult): Promise<void> {
    if (!thread.messageStore && result.conversationId !== undefined && this.chatClient.threadKind !== 'message-store') {
      thread.setServiceThreadId(result.conversationId);
      if (result.continuation) thread.state = { ...thread.state, continuation: result.continuation as never };
      return;
    }
    if (!thread.messageStore) thread.attachMessageStore(this.#storeFactory.create(thread.origin));
    await thread.messageStore!.addMessages([...input, ...produced]);
  }

  #authored(messages: ChatMessage[]): ChatMessage[] {
    if (this.name === undefined) return messages;
    return messages.map((m) => (m.role === 'assistant' && m.authorName === undefined ? { ...m, authorName: this.name } : m));
  }

  #toAgentUpdate(update: ChatResponseUpdate): AgentRunResponseUpdate {
    let text = '';
    for (const c of update.contents) if (isText(c)) text += c.text;
    const out: AgentRunResponseUpdate = { text, contents: update.contents, role: update.role ?? 'assistant' };
    if (out.role === 'assistant' && this.name !== undefined) out.authorName = this.name;
    if (update.messageId) out.messageId = update.messageId;
    if (update.responseId) out.responseId = update.responseId;
    if (update.toolCallDelta) out.toolCallDelta = update.toolCallDelta;
    return out;
  }
}

function toolMap(tools: readonly AITool[]): Map<string, AITool> {
  const map = new Map<string, AITool>();
  for (const t of tools) {
    if (map.has(t.declaration.name)) throw new TypeError(`Two tools are named "${t.declaration.name}"; tool names must be unique per agent.`);
    map.set(t.declaration.name, t);
  }
  return map;
}

function stamp(messages: ChatMessage[]): ChatMessage[] {
  const now = new Date().toISOString();
  return messages.map((m) => (m.createdAt ? m : { ...m, createdAt: now }));
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

/** Subscribes to one streamed model call, forwarding updates, and resolves with the folded response. */
function collectStream(
  stream: Observable<ChatResponseUpdate>,
  onUpdate: (update: ChatResponseUpdate) => void,
  signal: AbortSignal,
): Promise<ChatResponse> {
  return new Promise<ChatResponse>((resolve, reject) => {
    const updates: ChatResponseUpdate[] = [];
    const onAbort = () => {
      subscription.unsubscribe();
      reject(new AbortError(undefined, { cause: signal.reason }));
    };
    const subscription = stream.subscribe({
      next: (update) => {
        updates.push(update);
        onUpdate(update);
      },
      error: (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
      complete: () => {
        signal.removeEventListener('abort', onAbort);
        resolve(responseFromUpdates(updates));
      },
    });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
