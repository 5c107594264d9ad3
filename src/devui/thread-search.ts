import { type ChatMessage, messageText } from '../messages/chat-message.js';
import { UNSTARTED_THREAD_TYPE } from '../threads/agent-thread.js';
import type { ThreadSummary } from './devui-api-types.js';
import { HttpError } from './devui-http.js';
import type { DevUIState } from './devui-state.js';
import type { ThreadIndexEntry } from './thread-index.js';
import { sharingWith, summarize } from './thread-views.js';

/**
 * Every entry's summary for `GET /api/threads`, filtered by `?agent=` and `?q=` (all words, any
 * case); entries left sharing one history (by an older Dev UI) name each other.
 */
export async function listThreads(state: DevUIState, query: URLSearchParams): Promise<ThreadSummary[]> {
  const entries = await state.index.list();
  const agent = query.get('agent') || undefined;
  if (agent !== undefined && !state.agents.has(agent)) throw new HttpError(400, `Unknown agent ${JSON.stringify(agent)} in ?agent=; configured agents: ${[...state.agents.keys()].join(', ')}.`);
  const words = (query.get('q') ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  const shown: ThreadSummary[] = [];
  for (const entry of entries) {
    if (agent !== undefined && entry.agent !== agent) continue;
    const summary = summarize(entry, sharingWith(entry, entries));
    if (words.length) {
      const match = await matchOf(state, entry, words);
      if (!match) continue;
      summary.match = match;
    }
    shown.push(summary);
  }
  return shown;
}

/**
 * Where a thread holds every search word: its title, else its messages (read from its store, or
 * the Dev UI's transcript for a service thread), with a short excerpt around the first word.
 */
async function matchOf(state: DevUIState, entry: ThreadIndexEntry, words: readonly string[]): Promise<ThreadSummary['match'] | undefined> {
  if (words.every((w) => entry.title.toLowerCase().includes(w))) return { in: 'title' };
  let messages: readonly ChatMessage[] = entry.transcript ?? [];
  if (!entry.transcript && entry.serialized.$type !== UNSTARTED_THREAD_TYPE) {
    // A thread whose agent or store is gone cannot be searched; it is simply not a match.
    const thread = await state.agent(entry.agent).deserializeThread(entry.serialized).catch(() => undefined);
    messages = (await thread?.messageStore?.listMessages().catch(() => undefined)) ?? [];
  }
  const text = messages.map((m) => messageText(m)).join('\n');
  const lower = text.toLowerCase();
  if (!words.every((w) => lower.includes(w) || entry.title.toLowerCase().includes(w))) return undefined;
  const at = Math.max(0, ...words.map((w) => lower.indexOf(w)).filter((i) => i >= 0).slice(0, 1));
  const start = Math.max(0, at - 30);
  return { in: 'messages', excerpt: `${start > 0 ? '…' : ''}${text.slice(start, at + 60).replace(/\s+/g, ' ').trim()}${at + 60 < text.length ? '…' : ''}` };
}
