import OpenAI, { type ClientOptions } from 'openai';
import type { ResponseCreateParamsBase } from 'openai/resources/responses/responses';
import type { Observable } from 'rxjs';
import { defer } from 'rxjs/internal/observable/defer';
import {
  type ChatClient,
  type ChatMessage,
  type ChatOptions,
  type ChatResponse,
  type ChatResponseUpdate,
  ConfigurationError,
  ConnectionError,
  type DeleteServiceThreadOptions,
  NotFoundError,
  type ServiceThreadFork,
  ServiceError,
  type ThreadKind,
} from 'skein';
import { toSkeinError } from './openai-errors.js';
import { createOpenAISdkClient } from './openai-sdk-client.js';
import {
  contentsOfItem,
  continuationIdOf,
  finishReasonOf,
  fromResponse,
  responsesUsage,
  toResponsesInput,
  toResponsesTools,
} from './responses-mapping.js';
import { chainForkPoint, conversationItems, conversationWithItems, copiedItems, messagesFromItems, readResponseChain } from './responses-history.js';
import { streamedEvents } from './raw-reply.js';
import { streamFromAsyncIterable } from './stream-observable.js';

export const OPENAI_RESPONSES_CLIENT_ID = 'openai-responses';

/** Every option `new OpenAI(...)` takes, plus the default model and the thread-kind switches. */
export interface OpenAIResponsesClientOptions extends ClientOptions {
  model?: string;
  /** Use this SDK client instead of building one. */
  client?: OpenAI;
  /** The provider id threads record; `openai-responses` by default. */
  providerId?: string;
  /**
   * `true` (default): the service stores responses and threads are service threads (their id
   * continues the conversation). `false`: nothing is stored, threads keep their history in a
   * message store and send it in full. Overridable per agent with the `store` agent option.
   */
  store?: boolean;
  /**
   * With `store`, new threads use a Conversations API conversation (`conv_...`, created on the
   * first run) instead of `previous_response_id` chaining. Overridable per agent/run.
   */
  conversation?: boolean;
}

/** Provider options passed through to `responses.create` when given (agent config or run options). */
const PASSTHROUGH = ['metadata', 'truncation', 'parallel_tool_calls', 'reasoning', 'include', 'safety_identifier', 'prompt_cache_key', 'service_tier', 'text'] as const;

/** What is said to the model for a call whose run ended before the call had a result. */
export const INTERRUPTED_CALL_OUTPUT = 'Error: no result; the run that asked for this call ended before the call completed.';

type CreateBody = Omit<ResponseCreateParamsBase, 'stream'> & { input: OpenAI.Responses.ResponseInputItem[] };

/** Per-call bookkeeping: a conversation made for this call is deleted again if the call fails. */
interface CallState {
  createdConversation?: string;
  completed: boolean;
}

/**
 * OpenAI Responses (and Conversations) on the official `openai` SDK. Thread kind per agent:
 * `store: true` (default) makes service threads whose id is the last response id
 * (`previous_response_id` chaining) or a `conv_...` conversation id; `store: false` makes
 * message-store threads whose history is sent in full.
 */
export class OpenAIResponsesClient implements ChatClient {
  readonly providerId: string;
  readonly threadKind: ThreadKind = 'either';
  readonly client: OpenAI;
  readonly model: string | undefined;
  readonly store: boolean;
  readonly conversation: boolean;

  constructor(options: OpenAIResponsesClientOptions = {}) {
    const { model, client, providerId, store, conversation, ...sdkOptions } = options;
    this.providerId = providerId ?? OPENAI_RESPONSES_CLIENT_ID;
    this.client = client ?? createOpenAISdkClient(this.providerId, sdkOptions);
    this.model = model;
    this.store = store ?? true;
    this.conversation = conversation ?? false;
  }

  /** `store: false` (client or agent option) -> message-store threads; otherwise service threads. */
  threadKindFor(options: ChatOptions): ThreadKind {
    return this.#settings(options).store ? 'service' : 'message-store';
  }

  async getResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatResponse> {
    const state: CallState = { completed: false };
    const signal = options.signal;
    try {
      const body = await this.#prepare(messages, options, state, signal);
      const response = await this.#sendRepairing(body, signal, (b) => this.client.responses.create({ ...b, stream: false }, { signal }));
      const result = fromResponse(this.providerId, response);
      state.completed = true;
      return result;
    } catch (error) {
      this.#discard(state);
      throw this.#error(error, signal);
    }
  }

  getStreamingResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): Observable<ChatResponseUpdate> {
    // defer: each subscription gets its own bookkeeping (and its own request).
    return defer(() => {
      const state: CallState = { completed: false };
      return streamFromAsyncIterable<OpenAI.Responses.ResponseStreamEvent, ChatResponseUpdate>({
        signal: options.signal,
        open: async (signal) => {
          // Unsubscribing aborts this signal; a conversation made for the call goes with it.
          signal.addEventListener('abort', () => this.#discard(state), { once: true });
          const body = await this.#prepare(messages, options, state, signal);
          return this.#sendRepairing(body, signal, (b): Promise<AsyncIterable<OpenAI.Responses.ResponseStreamEvent>> =>
            streamedEvents(this.client.responses.create({ ...b, stream: true }, { signal })),
          );
        },
        translate: () => new ResponsesEventTranslator(this.providerId, () => (state.completed = true)),
        toError: (error, signal) => {
          this.#discard(state);
          return this.#error(error, signal);
        },
      });
    });
  }

  /**
   * Deletes a service thread: a conversation (`conv_...`), or the stored responses of a
   * `previous_response_id` chain, walking back from the thread's last response. Already
   * deleted objects count as deleted.
   */
  async deleteServiceThread(serviceThreadId: string, options: DeleteServiceThreadOptions = {}): Promise<void> {
    const { signal } = options;
    try {
      if (isConversationId(serviceThreadId)) {
        await ignoreNotFound(this.client.conversations.delete(serviceThreadId, { signal }));
        return;
      }
      // A fork of a chain shares its origin's responses up to its branch point: those stay.
      for (let id: string | null | undefined = serviceThreadId; id && id !== options.sharedUntil; ) {
        const response: OpenAI.Responses.Response | undefined = await ignoreNotFound(this.client.responses.retrieve(id, {}, { signal }));
        await ignoreNotFound(this.client.responses.delete(id, { signal }));
        id = response?.previous_response_id;
      }
    } catch (error) {
      throw this.#error(error, signal);
    }
  }

  /**
   * A service thread's history, oldest first, each item once: a conversation's items (every
   * page), or a `previous_response_id` chain read from its last response (see readResponseChain:
   * the newest response's input items, which with the service hold the whole context, plus its
   * output; each response's output is one assistant message whose id is the response id).
   */
  async getServiceThreadMessages(serviceThreadId: string, options: { signal?: AbortSignal } = {}): Promise<ChatMessage[]> {
    const { signal } = options;
    try {
      if (isConversationId(serviceThreadId)) return messagesFromItems(await conversationItems(this.client, serviceThreadId, signal));
      return (await readResponseChain(this.client, serviceThreadId, signal)).messages;
    } catch (error) {
      throw this.#error(error, signal);
    }
  }

  /**
   * Forks natively. A chain: the fork continues from the response that ends at the cut
   * (`previous_response_id`; nothing is copied, the fork shares the earlier responses with its
   * origin); a cut inside a response's input is refused with ForkUnsupportedError. A
   * conversation: a new conversation with the first `count` messages' items copied.
   */
  async forkServiceThread(
    serviceThreadId: string,
    options: { count: number; messages: readonly ChatMessage[]; signal?: AbortSignal },
  ): Promise<ServiceThreadFork> {
    const { signal, count } = options;
    if (isConversationId(serviceThreadId)) {
      try {
        return { serviceThreadId: await conversationWithItems(this.client, copiedItems(options.messages.slice(0, count)), signal) };
      } catch (error) {
        throw this.#error(error, signal);
      }
    }
    let history;
    try {
      history = await readResponseChain(this.client, serviceThreadId, signal);
    } catch (error) {
      throw this.#error(error, signal);
    }
    const responseId = chainForkPoint(this.providerId, history, count);
    return { serviceThreadId: responseId, sharedUntil: responseId };
  }

  #settings(options: ChatOptions): { store: boolean; conversation: boolean } {
    const extra = options.additionalProperties ?? {};
    for (const key of ['store', 'conversation'] as const) {
      if (extra[key] !== undefined && typeof extra[key] !== 'boolean') {
        throw new ConfigurationError(`${this.providerId}: the "${key}" option must be true or false, got ${JSON.stringify(extra[key])}.`);
      }
    }
    return {
      store: (extra.store as boolean | undefined) ?? this.store,
      conversation: (extra.conversation as boolean | undefined) ?? this.conversation,
    };
  }

  async #prepare(messages: readonly ChatMessage[], options: ChatOptions, state: CallState, signal: AbortSignal | undefined): Promise<CreateBody> {
    const model = options.model ?? this.model;
    if (!model) {
      throw new ConfigurationError(`No model for ${this.providerId}: set \`model\` on the client, the agent config, or the run's chatOptions.`);
    }
    const { store, conversation } = this.#settings(options);
    const extra = options.additionalProperties ?? {};
    const tools = toResponsesTools(options);
    const body: CreateBody = {
      model,
      input: toResponsesInput(messages),
      instructions: options.instructions,
      tools,
      tool_choice: tools ? options.toolChoice : undefined,
      temperature: options.temperature,
      top_p: options.topP,
      max_output_tokens: options.maxOutputTokens,
      store,
    };
    for (const key of PASSTHROUGH) if (extra[key] !== undefined) (body as Record<string, unknown>)[key] = extra[key];

    const continueFrom = options.conversationId;
    if (continueFrom !== undefined) {
      if (!store) {
        throw new ConfigurationError(
          `${this.providerId}: service thread "${continueFrom}" continues only with store: true; this request has store: false.`,
        );
      }
      if (isConversationId(continueFrom)) body.conversation = continueFrom;
      else body.previous_response_id = continueFrom;
    } else if (store && conversation) {
      const created = await this.client.conversations.create({}, { signal });
      state.createdConversation = created.id;
      body.conversation = created.id;
    }
    return body;
  }

  /**
   * Sends; when the service refuses because function calls it holds have no output ("No tool
   * output found", e.g. a run interrupted mid tool exchange on a conversation), answers those
   * calls with an error output and sends once more.
   */
  async #sendRepairing<T>(body: CreateBody, signal: AbortSignal | undefined, send: (body: CreateBody) => Promise<T>): Promise<T> {
    try {
      return await send(body);
    } catch (error) {
      if (!isMissingToolOutput(error) || (body.previous_response_id == null && body.conversation == null)) throw error;
      const dangling = await this.#danglingCalls(body, signal);
      if (dangling.length === 0) throw error;
      const outputs: OpenAI.Responses.ResponseInputItem[] = dangling.map((callId) => ({
        type: 'function_call_output',
        call_id: callId,
        output: INTERRUPTED_CALL_OUTPUT,
      }));
      return send({ ...body, input: [...outputs, ...body.input] });
    }
  }

  /** Call ids the service holds without an output, that this request does not answer either. */
  async #danglingCalls(body: CreateBody, signal: AbortSignal | undefined): Promise<string[]> {
    const answered = new Set<string>();
    for (const item of body.input) if (item.type === 'function_call_output') answered.add(item.call_id);
    const calls: string[] = [];
    if (typeof body.previous_response_id === 'string') {
      const previous = await this.client.responses.retrieve(body.previous_response_id, {}, { signal });
      for (const item of previous.output) if (item.type === 'function_call') calls.push(item.call_id);
    } else if (typeof body.conversation === 'string') {
      // Newest first, back to the last user message: calls before it were answered, or it would not be there.
      for await (const item of this.client.conversations.items.list(body.conversation, { order: 'desc', limit: 50 }, { signal })) {
        if (item.type === 'message' && item.role === 'user') break;
        if (item.type === 'function_call_output') answered.add(item.call_id);
        if (item.type === 'function_call') calls.push(item.call_id);
      }
    }
    return calls.filter((id) => !answered.has(id)).reverse();
  }

  /** A conversation made for a call that did not complete is deleted (best effort, never awaited by the caller). */
  #discard(state: CallState): void {
    const id = state.createdConversation;
    if (id === undefined || state.completed) return;
    state.createdConversation = undefined;
    this.client.conversations.delete(id).catch(() => {
      // Best effort: the conversation is empty or partial and referenced by no thread.
    });
  }

  #error(error: unknown, signal: AbortSignal | undefined): Error {
    // The service reports a missing previous response as a 400; it is a missing object all the same.
    if (error instanceof OpenAI.APIError && error.code === 'previous_response_not_found') {
      return new NotFoundError(this.providerId, `${this.providerId}: ${error.message} (the thread's stored responses were deleted or expired; start a new thread).`, {
        status: error.status,
        requestId: error.requestID ?? undefined,
        cause: error,
      });
    }
    return toSkeinError(this.providerId, error, signal);
  }
}

export function isConversationId(id: string): boolean {
  return id.startsWith('conv_');
}

function isMissingToolOutput(error: unknown): boolean {
  return error instanceof OpenAI.APIError && error.status === 400 && /No tool output found for function call/i.test(error.message);
}

async function ignoreNotFound<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof OpenAI.NotFoundError) return undefined;
    throw error;
  }
}

/**
 * Responses stream events -> updates. Text deltas and whole function calls share one message
 * (id = the response id), matching the non-streaming result; argument deltas are progress.
 */
class ResponsesEventTranslator {
  #responseId: string | undefined;
  #ended = false;
  /** Hosted MCP calls in progress: item id -> server label (argument deltas name only the item). */
  readonly #mcpServers = new Map<string, string>();

  constructor(
    private readonly provider: string,
    private readonly onCompleted: () => void,
  ) {}

  next(event: OpenAI.Responses.ResponseStreamEvent): ChatResponseUpdate[] {
    switch (event.type) {
      case 'response.created':
        this.#responseId = event.response.id;
        return [{ contents: [], responseId: event.response.id, modelId: event.response.model }];
      case 'response.output_text.delta':
        return [{ role: 'assistant', contents: [{ kind: 'text', text: event.delta }], messageId: this.#responseId, responseId: this.#responseId }];
      case 'response.output_item.added':
        if (event.item.type === 'function_call') {
          return [this.#progress({ index: event.output_index, callId: event.item.call_id, name: event.item.name, argumentsDelta: '' })];
        }
        if (event.item.type === 'mcp_call') {
          // The service starts calling a hosted MCP tool: progress only; the call is content when done.
          // Its arguments follow as deltas (as for function calls): none are taken from the added item.
          const { id, name, server_label } = event.item;
          this.#mcpServers.set(id, server_label);
          return [this.#progress({ index: event.output_index, callId: id, name, argumentsDelta: '', serverLabel: server_label })];
        }
        return [];
      case 'response.function_call_arguments.delta':
        return [this.#progress({ index: event.output_index, argumentsDelta: event.delta })];
      case 'response.mcp_call_arguments.delta':
        return [this.#progress({ index: event.output_index, callId: event.item_id, argumentsDelta: event.delta, serverLabel: this.#serverOf(event.item_id) })];
      case 'response.output_item.done': {
        // Text arrived as deltas; refusals, function calls and hosted MCP items arrive whole here.
        const contents = contentsOfItem(event.item).filter((c) => c.kind !== 'text');
        return contents.length ? [{ role: 'assistant', contents, messageId: this.#responseId, responseId: this.#responseId }] : [];
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = event.response;
        this.#ended = true;
        this.onCompleted();
        const usage = responsesUsage(response.usage);
        const update: ChatResponseUpdate = {
          contents: usage ? [{ kind: 'usage', usage }] : [],
          responseId: response.id,
          modelId: response.model,
          finishReason: finishReasonOf(response),
        };
        const conversationId = continuationIdOf(response);
        if (conversationId) update.conversationId = conversationId;
        return [update];
      }
      case 'response.failed':
        throw new ServiceError(this.provider, `${this.provider} response ${event.response.id} failed: ${event.response.error?.message ?? 'no reason given'}`);
      case 'error':
        throw new ServiceError(this.provider, `${this.provider} stream error${event.code ? ` (${event.code})` : ''}: ${event.message}`);
      default:
        return [];
    }
  }

  complete(): ChatResponseUpdate[] {
    // The event stream closed without an end event: the reply is incomplete, nothing may be kept.
    if (!this.#ended) throw new ConnectionError(this.provider, `${this.provider}: the response stream ended before response.completed.`);
    return [];
  }

  #serverOf(itemId: string): string {
    // An argument delta always follows its item's output_item.added; the fallback still marks it as hosted.
    return this.#mcpServers.get(itemId) ?? '(unknown server)';
  }

  #progress(delta: NonNullable<ChatResponseUpdate['toolCallDelta']>): ChatResponseUpdate {
    return { role: 'assistant', contents: [], messageId: this.#responseId, toolCallDelta: delta };
  }
}
