import type { ThreadKind } from '../clients/chat-client.js';
import { AgentThread } from './agent-thread.js';
import type { ChatMessageStoreFactory } from './chat-message-store.js';

export interface ThreadRequest {
  provider: string;
  agent?: string;
  threadKind: ThreadKind;
  messageStoreFactory: ChatMessageStoreFactory;
}

/** Makes new threads for an agent. Plugins may bind their own (named by plugin id). */
export const ThreadFactory = Symbol('ThreadFactory');
export interface ThreadFactory {
  createThread(request: ThreadRequest): AgentThread;
}

/**
 * Message-store clients get their store at once (so a new thread already serializes with its
 * store key); service and either-kind clients decide on the first run.
 */
export class DefaultThreadFactory implements ThreadFactory {
  createThread(request: ThreadRequest): AgentThread {
    const origin = { provider: request.provider, agent: request.agent };
    if (request.threadKind !== 'message-store') return new AgentThread({ origin });
    return new AgentThread({ origin, messageStore: request.messageStoreFactory.create(origin) });
  }
}
