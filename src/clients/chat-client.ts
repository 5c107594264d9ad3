import type { Observable } from 'rxjs';
import type { ChatMessage } from '../messages/chat-message.js';
import type { ChatOptions } from './chat-options.js';
import type { ChatResponse, ChatResponseUpdate } from './chat-response.js';

/**
 * Which history a client's threads use: `message-store` (Skein keeps it and sends it in full),
 * `service` (the service keeps it; a thread holds its id), or `either` (the service decides per
 * run, e.g. Responses with `store: true|false`).
 */
export type ThreadKind = 'message-store' | 'service' | 'either';

/** A model endpoint. Implementations are stateless: all conversation state is in the arguments. */
export const ChatClient = Symbol('ChatClient');
export interface ChatClient {
  /** The client id threads record, e.g. `openai-chat`. */
  readonly providerId: string;
  readonly threadKind: ThreadKind;
  /**
   * The kind of the threads an agent with these (agent-level) options makes, for clients whose
   * kind depends on configuration (`either`, e.g. Responses with `store: true|false`). Without
   * it, `threadKind` is the answer.
   */
  threadKindFor?(options: ChatOptions): ThreadKind;
  getResponse(messages: readonly ChatMessage[], options?: ChatOptions): Promise<ChatResponse>;
  /**
   * A cold Observable: one request per subscription, aborted on unsubscribe or when
   * `options.signal` aborts.
   */
  getStreamingResponse(messages: readonly ChatMessage[], options?: ChatOptions): Observable<ChatResponseUpdate>;
  /** Deletes a service-side thread. Clients without service threads need not implement it. */
  deleteServiceThread?(serviceThreadId: string, options?: DeleteServiceThreadOptions): Promise<void>;
  /**
   * The whole history of a service thread as messages, oldest first (every page). Clients
   * without it cannot show a service thread's history (`agent.getMessages` says so).
   */
  getServiceThreadMessages?(serviceThreadId: string, options?: { signal?: AbortSignal }): Promise<ChatMessage[]>;
  /**
   * A new service thread holding the first `count` messages of `serviceThreadId` (as
   * `getServiceThreadMessages` returns them, passed in as `messages`); returns its id. The
   * original is not changed. Throws ForkUnsupportedError, before creating anything, when the
   * service cannot continue from that point. Clients without it cannot fork service threads.
   */
  forkServiceThread?(serviceThreadId: string, options: { count: number; messages: readonly ChatMessage[]; signal?: AbortSignal }): Promise<ServiceThreadFork>;
}

/** A forked service thread. */
export interface ServiceThreadFork {
  serviceThreadId: string;
  /**
   * Set when the fork shares stored objects with its origin instead of copying them (Responses
   * `previous_response_id` chains): the newest shared one. Deleting the fork keeps it and older ones.
   */
  sharedUntil?: string;
}

export interface DeleteServiceThreadOptions {
  signal?: AbortSignal;
  /** A fork's `sharedUntil`: the objects it shares with its origin are not deleted. */
  sharedUntil?: string;
}
