import { SERVICE_THREAD_TYPE, UNSTARTED_THREAD_TYPE } from '../threads/agent-thread.js';
import { HttpError, readJsonObject } from './devui-http.js';
import { reply, type JsonReply, type RequestContext, type Route } from './devui-router.js';
import type { DevUIState } from './devui-state.js';
import { describeDeletion } from './thread-identity.js';
import { listThreads } from './thread-search.js';
import { pendingOf, sharingWith, summarize, viewMessage } from './thread-views.js';

/** The thread index: list and search, open, rename, delete. */
export function threadRoutes(state: DevUIState): Route[] {
  return [
    { method: 'GET', path: '/api/threads', handle: async ({ query }) => reply(200, { threads: await listThreads(state, query) }) },
    { method: 'GET', path: '/api/threads/:id', handle: ({ params }) => getThread(state, params.id!) },
    { method: 'PATCH', path: '/api/threads/:id', handle: (context) => rename(state, context) },
    { method: 'DELETE', path: '/api/threads/:id', handle: ({ params, query }) => deleteThread(state, params.id!, query.get('confirm') === '1') },
  ];
}

async function getThread(state: DevUIState, id: string): Promise<JsonReply> {
  const entry = await state.entry(id);
  const agent = state.agent(entry.agent);
  const thread = await agent.deserializeThread(entry.serialized);
  const messages = thread.messageStore ? await thread.messageStore.listMessages() : (entry.transcript ?? []);
  return reply(200, {
    thread: summarize(entry),
    history: thread.messageStore ? 'store' : 'transcript',
    messages: messages.map(viewMessage),
    pendingApprovals: pendingOf(thread),
  });
}

/** Renames a thread (the Dev UI's title; the history is untouched). */
async function rename(state: DevUIState, { req, params }: RequestContext): Promise<JsonReply> {
  const id = params.id!;
  const body = await readJsonObject(req);
  const title = typeof body.title === 'string' ? body.title.trim().replace(/\s+/g, ' ') : undefined;
  if (!title || title.length > 200) {
    throw new HttpError(400, `"title" must be a non-empty string of at most 200 characters; got ${typeof body.title === 'string' ? `${body.title.trim().length} characters` : JSON.stringify(body.title)}.`);
  }
  const entry = await state.entry(id);
  state.assertIdle(id, 'rename it when the turn ends');
  const renamed = { ...entry, title };
  await state.index.put(renamed);
  return reply(200, { thread: summarize(renamed) });
}

/**
 * Deletes what `deletion` says: the history (store or service) and the entry. When another
 * entry uses the same history (left by an older Dev UI), only this entry goes.
 */
async function deleteThread(state: DevUIState, id: string, confirmed: boolean): Promise<JsonReply> {
  const entry = await state.entry(id);
  state.assertIdle(id, 'stop it before deleting it');
  const service = entry.serialized.$type === SERVICE_THREAD_TYPE;
  const shared = sharingWith(entry, await state.index.list());
  const deletion = describeDeletion(entry.title, entry.serialized, shared);
  if (service && !confirmed) {
    throw new HttpError(409, `Thread "${entry.title}" is kept by the service; confirm to delete it there too (add ?confirm=1). ${deletion}`);
  }
  if (entry.serialized.$type !== UNSTARTED_THREAD_TYPE && shared.length === 0) {
    const agent = state.agent(entry.agent);
    await agent.deleteThread(await agent.deserializeThread(entry.serialized));
  }
  await state.index.delete(id);
  state.tracing.collector?.forget(id);
  return reply(200, { deleted: true, service, historyKept: shared.length > 0, deletion });
}
