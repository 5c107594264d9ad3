import type { PendingApproval, ThreadSummary } from '../devui-api-types.js';
import type { TurnTrace } from '../turn-traces.js';
import { describeAgent } from './agent-picker.js';
import { api, clearError, showError } from './api-client.js';
import { resetApprovals, showApproval } from './approval-view.js';
import { $, agentSelect, el, messages } from './dom.js';
import { renderMessage } from './message-view.js';
import { page } from './page-state.js';
import type { ViewMessage } from './page-types.js';
import { showThreadTraces } from './trace-view.js';

const threadList = $<HTMLUListElement>('thread-list');
const threadsEmpty = $('threads-empty');
const threadTitle = $('thread-title');
const threadMeta = $('thread-meta');
const historyNote = $('history-note');
const download = $<HTMLAnchorElement>('download');
const loadNote = $('load-note');
const threadSearch = $<HTMLInputElement>('thread-search');
const agentFilter = $<HTMLSelectElement>('thread-agent-filter');
/** Answers to older searches are dropped when a newer one was asked. */
let threadQuery = 0;

export async function loadThreads(): Promise<void> {
  const query = new URLSearchParams();
  if (threadSearch.value.trim()) query.set('q', threadSearch.value.trim());
  if (agentFilter.value) query.set('agent', agentFilter.value);
  const asked = ++threadQuery;
  const { threads } = await api<{ threads: ThreadSummary[] }>(`/api/threads${query.size ? `?${query}` : ''}`);
  if (asked !== threadQuery) return;
  const filtering = query.size > 0;
  threadsEmpty.textContent = filtering ? 'No thread matches.' : 'No threads yet. Send a message to start one.';
  threadsEmpty.hidden = threads.length > 0;
  threadList.replaceChildren(
    ...threads.map((t) => {
      const item = el('li', 'thread');
      item.dataset.id = t.id;
      if (page.currentThread?.id === t.id) item.classList.add('active');
      const open = el('button', 'open');
      open.type = 'button';
      open.append(el('span', 'title', t.title), el('span', 'meta', `${t.agent} · ${t.kind === 'service' ? 'service thread' : t.type} · ${new Date(t.updatedAt).toLocaleString()}`));
      if (t.match?.in === 'messages') open.append(el('span', 'excerpt', t.match.excerpt));
      if (t.pendingApprovals > 0) open.append(el('span', 'awaiting', t.pendingApprovals === 1 ? 'awaiting approval' : `${t.pendingApprovals} awaiting approval`));
      open.addEventListener('click', () => void openThread(t.id).catch(showError));
      const remove = el('button', 'delete', 'Delete');
      remove.type = 'button';
      remove.title = 'Delete thread';
      remove.setAttribute('aria-label', `Delete thread ${t.title}`);
      remove.addEventListener('click', () => void deleteThread(t).catch(showError));
      item.append(open, remove);
      return item;
    }),
  );
}

export function setCurrentThread(thread: ThreadSummary | undefined): void {
  page.currentThread = thread;
  threadTitle.textContent = thread ? thread.title : 'New chat';
  threadMeta.textContent = thread
    ? `${thread.agent} · ${thread.kind === 'service' ? `service thread ${thread.serviceThreadId ?? ''}` : `${thread.type} thread`}`
    : '';
  download.hidden = !thread;
  $('rename').hidden = !thread;
  if (thread) {
    download.href = `/api/threads/${encodeURIComponent(thread.id)}/json`;
    download.setAttribute('download', `skein-thread-${thread.id}.json`);
    agentSelect.value = thread.agent;
    describeAgent();
  }
  for (const item of Array.from(threadList.querySelectorAll<HTMLLIElement>('li.thread'))) item.classList.toggle('active', item.dataset.id === thread?.id);
}

export async function openThread(id: string): Promise<void> {
  if (page.running) return;
  clearError();
  loadNote.hidden = true;
  // Both before anything is drawn, so the thread appears at once, its traces under it.
  const [view, { traces }] = await Promise.all([
    api<{ thread: ThreadSummary; history: 'store' | 'transcript'; messages: ViewMessage[]; pendingApprovals: PendingApproval[] }>(`/api/threads/${encodeURIComponent(id)}`),
    api<{ traces: TurnTrace[] }>(`/api/threads/${encodeURIComponent(id)}/traces`),
  ]);
  setCurrentThread(view.thread);
  messages.replaceChildren();
  resetApprovals();
  historyNote.hidden = view.history !== 'transcript';
  historyNote.textContent = 'The service keeps this thread\'s history; shown here are the messages exchanged through this Dev UI.';
  const pendingIds = new Set(view.pendingApprovals.map((p) => p.callId));
  // A store thread's messages are its history, so each can be a fork point (agent.forkThread).
  view.messages.forEach((message, i) => renderMessage(message, pendingIds, view.history === 'store' ? { at: i, onFork: forkThread } : undefined));
  // The thread's state keeps the calls waiting for approval, so they are asked again after a reload.
  for (const request of view.pendingApprovals) showApproval(request);
  showThreadTraces(traces);
}

export function newChat(): void {
  if (page.running) return;
  clearError();
  loadNote.hidden = true;
  setCurrentThread(undefined);
  historyNote.hidden = true;
  messages.replaceChildren();
  resetApprovals();
  $('input').focus();
}

/** A new, independent thread holding the history up to and including message `at`; it opens at once. */
async function forkThread(at: number): Promise<void> {
  const thread = page.currentThread;
  if (!thread || page.running) return;
  const { thread: fork } = await api<{ thread: ThreadSummary }>(`/api/threads/${encodeURIComponent(thread.id)}/fork`, { method: 'POST', body: JSON.stringify({ at }) });
  await loadThreads();
  await openThread(fork.id);
}

async function renameThread(): Promise<void> {
  const thread = page.currentThread;
  if (!thread) return;
  const title = window.prompt('Rename this thread', thread.title);
  if (title === null || !title.trim() || title.trim() === thread.title) return;
  const renamed = await api<{ thread: ThreadSummary }>(`/api/threads/${encodeURIComponent(thread.id)}`, { method: 'PATCH', body: JSON.stringify({ title }) });
  if (page.currentThread?.id === thread.id) setCurrentThread(renamed.thread);
  await loadThreads();
}

async function deleteThread(thread: ThreadSummary): Promise<void> {
  if (!window.confirm(`Delete this thread?\n\n${thread.deletion}`)) return;
  await api(`/api/threads/${encodeURIComponent(thread.id)}?confirm=1`, { method: 'DELETE' });
  if (page.currentThread?.id === thread.id) newChat();
  await loadThreads();
}


threadSearch.addEventListener('input', () => void loadThreads().catch(showError));
agentFilter.addEventListener('change', () => void loadThreads().catch(showError));
$('rename').addEventListener('click', () => void renameThread().catch(showError));
