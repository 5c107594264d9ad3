import { HttpError, readJsonObject } from './devui-http.js';
import { reply, type JsonReply, type RequestContext, type Route } from './devui-router.js';
import type { DevUIState } from './devui-state.js';
import { newEntry, summarize } from './thread-views.js';

/** `POST /api/threads/:id/fork`: a thread forked at one of its messages. */
export function forkRoute(state: DevUIState): Route {
  return { method: 'POST', path: '/api/threads/:id/fork', handle: (context) => fork(state, context) };
}

/**
 * Forks a thread at one of its messages (`agent.forkThread`): a new, independent entry holding
 * the history up to and including that message; the original is untouched.
 */
async function fork(state: DevUIState, { req, params }: RequestContext): Promise<JsonReply> {
  const id = params.id!;
  const body = await readJsonObject(req);
  if (typeof body.at !== 'number' || !Number.isInteger(body.at) || body.at < 0) {
    throw new HttpError(400, `"at" must be the index of a message of the thread (0 is the first); got ${JSON.stringify(body.at)}.`);
  }
  const entry = await state.entry(id);
  state.assertIdle(id, 'fork it when the turn ends');
  const agent = state.agent(entry.agent);
  const forkedThread = await agent.forkThread(await agent.deserializeThread(entry.serialized), { at: body.at });
  const forked = await newEntry(entry.agent, `${entry.title} (fork at message ${body.at + 1})`, forkedThread);
  // A service keeps the fork's history; the Dev UI shows it as the service returns it.
  if (!forkedThread.messageStore) forked.transcript = await agent.getMessages(forkedThread).catch(() => []);
  await state.index.put(forked);
  return reply(201, { thread: summarize(forked) });
}
