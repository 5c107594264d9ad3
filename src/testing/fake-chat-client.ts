// Observable alone: the rxjs index loads every operator (megabytes of RSS); same class either way.
// The declarations name rxjs's public Observable type; the class comes from its own module.
import type { Observable } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import type { ChatClient, ThreadKind } from '../clients/chat-client.js';
import type { ChatOptions } from '../clients/chat-options.js';
import type { ChatResponse, ChatResponseUpdate } from '../clients/chat-response.js';
import { AbortError } from '../errors/skein-error.js';
import type { ChatMessage } from '../messages/chat-message.js';

export interface FakeCall {
  messages: ChatMessage[];
  options: ChatOptions;
  streaming: boolean;
}

export type FakeReply = ChatResponse | Error | ((messages: readonly ChatMessage[], options: ChatOptions) => ChatResponse | Promise<ChatResponse>);

/**
 * A ChatClient for users' unit tests: replies come from a queue (or a function), every call is
 * recorded, and streaming replays a reply as one update per text content and function call.
 */
export class FakeChatClient implements ChatClient {
  readonly providerId: string;
  readonly threadKind: ThreadKind;
  readonly calls: FakeCall[] = [];
  readonly #replies: FakeReply[];

  constructor(options: { replies?: FakeReply[]; providerId?: string; threadKind?: ThreadKind } = {}) {
    this.#replies = [...(options.replies ?? [])];
    this.providerId = options.providerId ?? 'fake';
    this.threadKind = options.threadKind ?? 'message-store';
  }

  /** Queues a reply: a text answer, a full ChatResponse, an Error to throw, or a function. */
  reply(reply: string | FakeReply): this {
    this.#replies.push(typeof reply === 'string' ? { messages: [{ role: 'assistant', contents: [{ kind: 'text', text: reply }] }] } : reply);
    return this;
  }

  async getResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatResponse> {
    this.calls.push({ messages: [...messages], options, streaming: false });
    if (options.signal?.aborted) throw new AbortError();
    return this.#next(messages, options);
  }

  getStreamingResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): Observable<ChatResponseUpdate> {
    return new RxObservable<ChatResponseUpdate>((subscriber) => {
      this.calls.push({ messages: [...messages], options, streaming: true });
      this.#next(messages, options).then(
        (response) => {
          for (const message of response.messages) {
            for (const content of message.contents) {
              if (subscriber.closed) return;
              subscriber.next({ role: message.role, contents: [content], messageId: message.messageId, responseId: response.responseId, conversationId: response.conversationId });
            }
          }
          if (response.usage) subscriber.next({ contents: [{ kind: 'usage', usage: response.usage }] });
          subscriber.complete();
        },
        (error: unknown) => subscriber.error(error),
      );
    });
  }

  async #next(messages: readonly ChatMessage[], options: ChatOptions): Promise<ChatResponse> {
    const reply = this.#replies.shift();
    if (reply === undefined) throw new Error(`FakeChatClient: no reply queued for call ${this.calls.length}.`);
    if (reply instanceof Error) throw reply;
    return typeof reply === 'function' ? reply(messages, options) : reply;
  }
}
