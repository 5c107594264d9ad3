import { waitingApprovalsOf } from '../agents/function-approvals.js';
import { type ChatMessage, messageText } from '../messages/chat-message.js';
import { SERVICE_THREAD_TYPE, UNSTARTED_THREAD_TYPE, type AgentThread } from '../threads/agent-thread.js';
import type { PendingApproval, ThreadSummary } from './devui-api-types.js';
import { describeDeletion, historyIdentity, storeKeyOf } from './thread-identity.js';
import { ThreadIndex, type ThreadIndexEntry } from './thread-index.js';

let lastStamp = 0;
/** ISO time that never repeats in this process, so "newest first" is exact even within one millisecond. */
export function timestamp(): string {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return new Date(lastStamp).toISOString();
}

/** A new index entry for `thread`, created now, with its count of pending approvals. */
export async function newEntry(agent: string, title: string, thread: AgentThread, now = timestamp()): Promise<ThreadIndexEntry> {
  const entry: ThreadIndexEntry = { id: ThreadIndex.newId(), agent, title, createdAt: now, updatedAt: now, serialized: await thread.serialize() };
  setPendingCount(entry, thread);
  return entry;
}

export function setPendingCount(entry: ThreadIndexEntry, thread: AgentThread): void {
  const count = waitingApprovalsOf(thread).length;
  if (count) entry.pendingApprovals = count;
  else delete entry.pendingApprovals;
}

export function pendingOf(thread: AgentThread): PendingApproval[] {
  return waitingApprovalsOf(thread).map(({ callId, name, arguments: args }) => ({ callId, name, arguments: args }));
}

/** Titles of the other entries on the same history as `entry` (none unless an older Dev UI made them). */
export function sharingWith(entry: ThreadIndexEntry, entries: readonly ThreadIndexEntry[]): string[] {
  const identity = historyIdentity(entry.serialized);
  if (identity === undefined) return [];
  return entries.filter((other) => other.id !== entry.id && historyIdentity(other.serialized) === identity).map((other) => other.title);
}

export function summarize(entry: ThreadIndexEntry, sharedWith: readonly string[] = []): ThreadSummary {
  const type = entry.serialized.$type;
  const summary: ThreadSummary = {
    id: entry.id,
    agent: entry.agent,
    title: entry.title,
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
    kind: type === SERVICE_THREAD_TYPE ? 'service' : type === UNSTARTED_THREAD_TYPE ? 'unstarted' : 'store',
    type,
    pendingApprovals: entry.pendingApprovals ?? 0,
    deletion: describeDeletion(entry.title, entry.serialized, sharedWith),
  };
  if (entry.serialized.serviceThreadId !== undefined) summary.serviceThreadId = entry.serialized.serviceThreadId;
  const storeKey = storeKeyOf(entry.serialized);
  if (storeKey !== undefined) summary.storeKey = storeKey;
  return summary;
}

export function viewMessage(message: ChatMessage): Pick<ChatMessage, 'role' | 'authorName' | 'contents' | 'createdAt'> {
  const view: Pick<ChatMessage, 'role' | 'authorName' | 'contents' | 'createdAt'> = { role: message.role, contents: message.contents };
  if (message.authorName !== undefined) view.authorName = message.authorName;
  if (message.createdAt !== undefined) view.createdAt = message.createdAt;
  return view;
}

export function titleOf(messages: readonly ChatMessage[]): string | undefined {
  const first = messages.find((m) => m.role === 'user' && messageText(m).trim());
  if (!first) return undefined;
  const text = messageText(first).trim().replace(/\s+/g, ' ');
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
