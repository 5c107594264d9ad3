import type { ChatClient } from '../clients/chat-client.js';
import { ForkUnsupportedError, HistoryUnavailableError, SkeinError } from '../errors/skein-error.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { JsonObject } from '../serialization/json.js';
import { AgentThread } from '../threads/agent-thread.js';
import type { ChatMessageStoreFactory } from '../threads/chat-message-store.js';
import { withoutSummaryBeyond } from '../threads/summarizing-reducer.js';
import { type ForkThreadOptions, forkCount, forkMessageStore } from '../threads/thread-history.js';
import { withHeldResults, withPendingApprovals, withSurfacedApprovals } from './function-approvals.js';

/** Thread state key: the newest service object a forked thread shares with its origin (kept when the fork is deleted). */
const SHARED_SERVICE_HISTORY = 'sharedServiceHistory';

/** The whole history of `thread`, oldest first: its store's, or the service thread's from the client. */
export async function threadHistory(chatClient: ChatClient, thread: AgentThread, signal: AbortSignal | undefined): Promise<ChatMessage[]> {
  if (thread.messageStore) return thread.messageStore.listMessages();
  if (thread.serviceThreadId === undefined) return [];
  if (!chatClient.getServiceThreadMessages) {
    throw new HistoryUnavailableError(
      chatClient.providerId,
      `The "${chatClient.providerId}" client cannot read the history of service thread "${thread.serviceThreadId}"; the service keeps it.`,
    );
  }
  return chatClient.getServiceThreadMessages(thread.serviceThreadId, { signal });
}

/** Deletes `thread`'s history: its store's messages, or its service thread (never what a fork shares with its origin). */
export async function deleteThreadHistory(chatClient: ChatClient, thread: AgentThread): Promise<void> {
  if (thread.messageStore) return thread.messageStore.clear();
  if (thread.serviceThreadId === undefined) return;
  if (!chatClient.deleteServiceThread) {
    throw new SkeinError(`The "${chatClient.providerId}" client cannot delete service threads.`);
  }
  const shared = thread.state[SHARED_SERVICE_HISTORY];
  await chatClient.deleteServiceThread(thread.serviceThreadId, typeof shared === 'string' ? { sharedUntil: shared } : undefined);
}

/**
 * ChatAgent.forkThread's work: a message-store thread gets a new store holding the copied
 * messages; a service thread gets a new service thread from the client, or
 * ForkUnsupportedError; a thread with nothing to copy gets `newThread()`. Waits for a turn
 * running on `thread` to finish, so the fork never sees half of one.
 */
export async function forkThread(
  chatClient: ChatClient,
  storeFactory: ChatMessageStoreFactory,
  newThread: () => AgentThread,
  thread: AgentThread,
  options: ForkThreadOptions,
): Promise<AgentThread> {
  const release = await thread.acquire('queue');
  try {
    const messages = await threadHistory(chatClient, thread, options.signal);
    const count = forkCount(messages, options.at);
    const state = forkedThreadState(thread.state, count);
    const origin = thread.origin;
    if (thread.messageStore) {
      const store = await forkMessageStore(thread.messageStore, messages, count, storeFactory, origin);
      return new AgentThread({ origin, messageStore: store, state });
    }
    if (thread.serviceThreadId === undefined || count === 0) {
      // Nothing to copy: a new thread that decides its kind on its first run, like getNewThread's.
      const fresh = newThread();
      fresh.state = state;
      return fresh;
    }
    if (!chatClient.forkServiceThread) {
      throw new ForkUnsupportedError(
        chatClient.providerId,
        `The "${chatClient.providerId}" client cannot fork service threads, so thread "${thread.serviceThreadId}" cannot be forked. ` +
          'Start a new thread instead, or use a client that keeps history in a message store.',
      );
    }
    const fork = await chatClient.forkServiceThread(thread.serviceThreadId, { count, messages, signal: options.signal });
    // A fork of a fork shares at most what its origin shared, plus what the client says.
    const forkState = fork.sharedUntil !== undefined ? { ...state, [SHARED_SERVICE_HISTORY]: fork.sharedUntil } : withoutKey(state, SHARED_SERVICE_HISTORY);
    return new AgentThread({ origin, serviceThreadId: fork.serviceThreadId, state: forkState });
  } finally {
    release();
  }
}

function withoutKey(state: JsonObject, key: string): JsonObject {
  if (!(key in state)) return state;
  const { [key]: _dropped, ...rest } = state;
  return rest;
}

/**
 * A fork's state: the origin's, without what belongs to the origin's unfinished last turn
 * (pending approvals and the results held for them: a fork ends before that turn) or to
 * messages the fork does not hold (a compaction summary past `count`). Other state (context
 * providers', an app's) is copied. For agents with their own `forkThread`, so a fork keeps the
 * same state whatever the agent.
 */
export function forkedThreadState(state: JsonObject, count: number): JsonObject {
  const out = withoutSummaryBeyond(withSurfacedApprovals(withHeldResults(withPendingApprovals(state, undefined), undefined), []), count);
  // A copy all the way down: a change to the fork's state never reaches the origin's, nor the reverse.
  return structuredClone(out);
}
