import type { AIAgent } from '../agents/ai-agent.js';
import type { AgentThread } from '../threads/agent-thread.js';
import type { LoadOutcome } from './devui-api-types.js';
import { HttpError, readJsonObject } from './devui-http.js';
import { reply, type JsonReply, type RequestContext, type Route } from './devui-router.js';
import type { DevUIState } from './devui-state.js';
import { historyIdentity } from './thread-identity.js';
import { newEntry, summarize, titleOf } from './thread-views.js';

/** A thread as a downloadable JSON file, and a file loaded back as a thread. */
export function importExportRoutes(state: DevUIState): Route[] {
  return [
    { method: 'POST', path: '/api/threads/import', handle: (context) => importThread(state, context) },
    { method: 'GET', path: '/api/threads/:id/json', handle: (context) => download(state, context) },
  ];
}

async function download(state: DevUIState, { res, params }: RequestContext): Promise<void> {
  const entry = await state.entry(params.id!);
  const fileName = `skein-thread-${entry.agent}-${entry.id}.json`.replace(/[^A-Za-z0-9._-]/g, '_');
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-disposition': `attachment; filename="${fileName}"`,
    'cache-control': 'no-store',
  });
  res.end(JSON.stringify(entry.serialized, undefined, 2));
}

/**
 * Loads a serialized thread (a downloaded file), checked by the agent that will continue it.
 * A file whose history is already listed (same durable store key or service thread) never
 * becomes a second entry on that history: the listed entry is returned (`existing`), unless
 * `as: "copy"` asks for a real copy (a new store key holding a copy of the messages).
 */
async function importThread(state: DevUIState, { req }: RequestContext): Promise<JsonReply> {
  const body = await readJsonObject(req);
  if (body.as !== undefined && body.as !== 'copy') throw new HttpError(400, `"as" must be "copy" (to load a real copy) or absent; got ${JSON.stringify(body.as)}.`);
  const serialized = body.serialized;
  const agentName = typeof body.agent === 'string' && body.agent ? body.agent : agentFor(state, serialized);
  const agent = state.agent(agentName);
  const loaded = await agent.deserializeThread(serialized);
  const identity = historyIdentity(await loaded.serialize());
  if (body.as !== 'copy' && identity !== undefined) {
    const listed = (await state.index.list()).find((entry) => historyIdentity(entry.serialized) === identity);
    if (listed) {
      const summary = summarize(listed);
      const message = `This thread is already listed as "${listed.title}" (${summary.kind === 'service' ? `service thread ${summary.serviceThreadId}` : `${summary.type} store, key ${summary.storeKey}`}); opened it instead of adding a second entry on the same history. Load it as a copy to get an independent thread.`;
      return reply(200, { thread: summary, loaded: 'existing' satisfies LoadOutcome, message });
    }
  }
  const copy = body.as === 'copy' && identity !== undefined;
  const thread = copy ? await copyThread(agent, loaded) : loaded;
  const messages = thread.messageStore ? await thread.messageStore.listMessages() : [];
  const title = titleOf(messages) ?? (thread.serviceThreadId ? `Service thread ${thread.serviceThreadId}` : 'Loaded thread');
  const entry = await newEntry(agentName, copy ? `${title} (copy)` : title, thread);
  if (!thread.messageStore) entry.transcript = [];
  await state.index.put(entry);
  const summary = summarize(entry);
  const message = copy
    ? `Loaded as a copy: ${messages.length} messages copied to a new ${summary.type} store key (${summary.storeKey}); the original is unchanged.`
    : `Loaded as a new thread.`;
  return reply(201, { thread: summary, loaded: (copy ? 'copy' : 'new') satisfies LoadOutcome, message });
}

/** The configured agent a serialized thread names (by config key or agent name). */
function agentFor(state: DevUIState, serialized: unknown): string {
  const named = serialized && typeof serialized === 'object' ? (serialized as { agent?: unknown }).agent : undefined;
  if (typeof named === 'string') {
    if (state.agents.has(named)) return named;
    for (const info of state.agents.values()) if (info.displayName === named) return info.name;
  }
  throw new HttpError(400, `Pick the agent to continue this thread with: the file names agent ${JSON.stringify(named)}, which is not configured.`);
}

/**
 * A real copy of a thread: a new thread of the same agent (a new store key), the messages and
 * the state (pending approvals) copied. A service thread cannot be copied this way: the service
 * keeps its history and Skein has no generic way to clone it there.
 */
async function copyThread(agent: AIAgent, original: AgentThread): Promise<AgentThread> {
  const copy = agent.getNewThread();
  if (!original.messageStore || copy.messageStore?.type !== original.messageStore.type) {
    const what = original.serviceThreadId ? `service thread ${original.serviceThreadId}` : 'this thread';
    throw new HttpError(409, `Cannot load ${what} as a copy: its history is kept by the service, which has no copy operation. Open the listed entry instead.`, 'ThreadCompatibilityError');
  }
  await copy.messageStore.addMessages(await original.messageStore.listMessages());
  copy.state = structuredClone(original.state);
  return copy;
}
