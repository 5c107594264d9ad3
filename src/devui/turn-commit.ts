import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import { responseFromUpdates } from '../clients/chat-response.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { AgentThread } from '../threads/agent-thread.js';
import type { ChatTurn } from './chat-request.js';
import type { ThreadIndex, ThreadIndexEntry } from './thread-index.js';
import { newEntry, setPendingCount, timestamp, titleOf } from './thread-views.js';

/**
 * Saves a turn's thread in the index: a store thread's history is in its store; for a service
 * thread the Dev UI keeps a transcript of what was sent and streamed back.
 */
export async function commitTurn(index: ThreadIndex, turn: ChatTurn, updates: readonly AgentRunResponseUpdate[]): Promise<ThreadIndexEntry> {
  const { thread, existing, input } = turn;
  const now = timestamp();
  const entry: ThreadIndexEntry = existing ? { ...existing, updatedAt: now, serialized: await thread.serialize() } : await newEntry(turn.agentName, titleOf(input) ?? 'New thread', thread, now);
  setPendingCount(entry, thread);
  if (thread.messageStore) {
    delete entry.transcript;
  } else {
    const produced = responseFromUpdates(updates.map((u) => ({ ...u, role: u.role ?? 'assistant' })))
      .messages.map((m) => withAuthor(m, updates))
      .map((m) => (m.createdAt ? m : { ...m, createdAt: now }));
    // The user's side of the turn as one message: approval answers first, then the typed text.
    const sent: ChatMessage = { role: 'user', contents: input.flatMap((m) => m.contents), createdAt: now };
    entry.transcript = [...(existing?.transcript ?? []), sent, ...produced];
  }
  await index.put(entry);
  return entry;
}

/** Saves a failed turn's thread only when the agent changed it (it kept settled approvals). */
export async function keepWhatTheAgentKept(index: ThreadIndex, turn: ChatTurn, updates: readonly AgentRunResponseUpdate[]): Promise<ThreadIndexEntry | undefined> {
  if (!turn.existing) return undefined;
  if (JSON.stringify(await turn.thread.serialize()) === JSON.stringify(turn.existing.serialized)) return undefined;
  return commitTurn(index, turn, updates);
}

/** Resolves once no run holds the thread (polled: a thread has no event for it), or after 10 s. */
export async function whenIdle(thread: AgentThread): Promise<void> {
  for (let waited = 0; thread.busy && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
}

function withAuthor(message: ChatMessage, updates: readonly AgentRunResponseUpdate[]): ChatMessage {
  if (message.role !== 'assistant' || message.authorName) return message;
  const author = updates.find((u) => u.authorName)?.authorName;
  return author ? { ...message, authorName: author } : message;
}
