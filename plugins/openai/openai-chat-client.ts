import type OpenAI from 'openai';
import type { ClientOptions } from 'openai';
import type { AzureClientOptions } from 'openai/azure';
// Observable alone: the rxjs index loads every operator (megabytes of RSS); same class either way.
import type { Observable } from 'rxjs';
import {
  type ChatClient,
  type ChatMessage,
  type ChatOptions,
  type ChatResponse,
  type ChatResponseUpdate,
  ConfigurationError,
  ConnectionError,
  type ThreadKind,
} from 'skein';
import {
  fromChatCompletion,
  toChatCompletionMessages,
  toChatCompletionTools,
  usageFrom,
} from './chat-completions-mapping.js';
import { toSkeinError } from './openai-errors.js';
import { createAzureOpenAISdkClient, createOpenAISdkClient } from './openai-sdk-client.js';
import { parsedReply, streamedEvents } from './raw-reply.js';
import { type StreamSource, streamFromAsyncIterable } from './stream-observable.js';

export const OPENAI_CHAT_CLIENT_ID = 'openai-chat';

/** Every option `new OpenAI(...)` takes (passed through unchanged), plus the default model. */
export interface OpenAIChatClientOptions extends ClientOptions {
  model?: string;
  /** Use this SDK client instead of building one (e.g. a shared or an AzureOpenAI instance). */
  client?: OpenAI;
  /** The provider id threads record; `openai-chat` by default. */
  providerId?: string;
}

/** Chat Completions on the official `openai` SDK. History is Skein's: threads use a message store. */
export class OpenAIChatClient implements ChatClient {
  readonly providerId: string;
  readonly threadKind: ThreadKind = 'message-store';
  readonly client: OpenAI;
  readonly model: string | undefined;

  constructor(options: OpenAIChatClientOptions = {}) {
    const { model, client, providerId, ...sdkOptions } = options;
    this.providerId = providerId ?? OPENAI_CHAT_CLIENT_ID;
    this.client = client ?? createOpenAISdkClient(this.providerId, sdkOptions);
    this.model = model;
  }

  /** Azure OpenAI through the SDK's `AzureOpenAI` client (endpoint, deployment, apiVersion, key or token). */
  static azure(options: AzureClientOptions & { model?: string; providerId?: string }): OpenAIChatClient {
    const { model, providerId, ...azureOptions } = options;
    return new OpenAIChatClient({ client: createAzureOpenAISdkClient(providerId ?? OPENAI_CHAT_CLIENT_ID, azureOptions), model: model ?? azureOptions.deployment, providerId });
  }

  async getResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatResponse> {
    try {
      const request = chatCompletionsRequest(this, messages, options) as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
      request.stream = false;
      // No signal, no request option: the SDK would otherwise hang an abort listener on it.
      const completion = await parsedReply(this.client.chat.completions.create(request, options.signal ? { signal: options.signal } : undefined));
      return fromChatCompletion(completion);
    } catch (error) {
      throw toSkeinError(this.providerId, error, options.signal);
    }
  }

  getStreamingResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): Observable<ChatResponseUpdate> {
    return streamFromAsyncIterable(new CompletionsStreamSource(this, messages, options));
  }
}

/** The Chat Completions request body for `messages` and the run's options. */
function chatCompletionsRequest(client: OpenAIChatClient, messages: readonly ChatMessage[], options: ChatOptions): OpenAI.Chat.Completions.ChatCompletionCreateParams {
  const model = options.model ?? client.model;
  if (!model) {
    throw new ConfigurationError(`No model for ${client.providerId}: set \`model\` on the client, the agent config, or the run's chatOptions.`);
  }
  // Only the options that are set: the SDK walks every key of the body, and the JSON is the
  // same (undefined keys are left out either way), in the same key order.
  const request: OpenAI.Chat.Completions.ChatCompletionCreateParams = { model, messages: toChatCompletionMessages(messages, options.instructions) };
  const tools = toChatCompletionTools(options);
  if (tools !== undefined) request.tools = tools;
  if (options.tools?.length && options.toolChoice !== undefined) request.tool_choice = options.toolChoice;
  if (options.temperature !== undefined) request.temperature = options.temperature;
  if (options.topP !== undefined) request.top_p = options.topP;
  if (options.maxOutputTokens !== undefined) request.max_completion_tokens = options.maxOutputTokens;
  if (options.stop !== undefined) request.stop = options.stop;
  if (options.seed !== undefined) request.seed = options.seed;
  const user = options.additionalProperties?.user;
  if (typeof user === 'string') request.user = user;
  return request;
}

/**
 * One streamed call's source, as one object with methods: a stream waiting for its reply holds
 * it, not three closures and their context (bytes per concurrent stream, docs/performance.md).
 */
class CompletionsStreamSource implements StreamSource<OpenAI.Chat.Completions.ChatCompletionChunk, ChatResponseUpdate> {
  readonly #client: OpenAIChatClient;
  readonly #messages: readonly ChatMessage[];
  readonly #options: ChatOptions;

  constructor(client: OpenAIChatClient, messages: readonly ChatMessage[], options: ChatOptions) {
    this.#client = client;
    this.#messages = messages;
    this.#options = options;
  }

  get signal(): AbortSignal | undefined {
    return this.#options.signal;
  }

  open(signal: AbortSignal): Promise<AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>> {
    const request = chatCompletionsRequest(this.#client, this.#messages, this.#options) as OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
    request.stream = true;
    request.stream_options = { include_usage: true };
    return streamedEvents(this.#client.client.chat.completions.create(request, { signal }));
  }

  translate(): ChunkTranslator {
    return new ChunkTranslator(this.#client.providerId);
  }

  toError(error: unknown, signal: AbortSignal): Error {
    return toSkeinError(this.#client.providerId, error, signal);
  }
}

/** `list` with `update` at its end; no list yet: a one-element literal. */
function withUpdate(list: ChatResponseUpdate[] | undefined, update: ChatResponseUpdate): ChatResponseUpdate[] {
  if (list === undefined) return [update];
  list.push(update);
  return list;
}

/** Turns chunks into updates; tool-call fragments are assembled and emitted whole at the end. */
class ChunkTranslator {
  // Made on the first tool-call fragment: most streams carry none.
  #calls: Map<number, { id: string; name: string; arguments: string }> | undefined;
  #finished = false;

  constructor(private readonly provider: string) {}

  next(chunk: OpenAI.Chat.Completions.ChatCompletionChunk): ChatResponseUpdate[] {
    // Nearly every chunk makes one update: the list starts as a one-element literal, since an
    // array grown from [] by push allocates room for seventeen (152 bytes), once per streamed chunk.
    let updates: ChatResponseUpdate[] | undefined;
    for (const choice of chunk.choices) {
      const delta = choice.delta;
      if (delta.content) updates = withUpdate(updates, { role: 'assistant', contents: [{ kind: 'text', text: delta.content }], messageId: chunk.id, responseId: chunk.id, modelId: chunk.model });
      if (delta.tool_calls) for (const part of delta.tool_calls) updates = withUpdate(updates, this.#toolCallDelta(part, chunk.id));
      if (choice.finish_reason) {
        this.#finished = true;
        updates = withUpdate(updates, { role: 'assistant', contents: this.#finishCalls(), messageId: chunk.id, responseId: chunk.id, finishReason: choice.finish_reason });
      }
    }
    if (chunk.usage) updates = withUpdate(updates, { contents: [{ kind: 'usage', usage: usageFrom(chunk.usage)! }], responseId: chunk.id });
    return updates ?? [];
  }

  complete(): ChatResponseUpdate[] {
    // A stream that ends without finish_reason was cut short (a proxy closing it cleanly, a
    // reply that is not an event stream): its text is partial, so the turn must not land.
    if (!this.#finished) {
      throw new ConnectionError(this.provider, `The ${this.provider} stream ended before the model finished (no finish_reason); nothing of this turn was kept.`);
    }
    const rest = this.#finishCalls();
    return rest.length ? [{ role: 'assistant', contents: rest }] : [];
  }

  #toolCallDelta(part: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall, chunkId: string): ChatResponseUpdate {
    this.#calls ??= new Map();
    const call = this.#calls.get(part.index) ?? { id: '', name: '', arguments: '' };
    if (part.id) call.id = part.id;
    if (part.function?.name) call.name += part.function.name;
    const fragment = part.function?.arguments ?? '';
    call.arguments += fragment;
    this.#calls.set(part.index, call);
    return {
      role: 'assistant',
      contents: [],
      messageId: chunkId,
      toolCallDelta: { index: part.index, callId: part.id, name: part.function?.name, argumentsDelta: fragment },
    };
  }

  #finishCalls(): ChatResponseUpdate['contents'] {
    if (!this.#calls?.size) return [];
    const contents: ChatResponseUpdate['contents'] = [...this.#calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => ({ kind: 'function-call', callId: c.id, name: c.name, arguments: c.arguments }));
    this.#calls.clear();
    return contents;
  }
}
