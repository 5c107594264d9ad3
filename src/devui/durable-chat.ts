import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { DurableAgent, DurableRunner } from '../durable/durable-runner.js';
import type { UsageDetails } from '../messages/content.js';
import type { ChatTurn } from './chat-request.js';
import { relayUpdate } from './chat-relay.js';
import { describeError, HttpError, SseWriter } from './devui-http.js';
import type { DevUIState } from './devui-state.js';
import type { ThreadIndexEntry } from './thread-index.js';
import { newEntry, pendingOf, setPendingCount, summarize, timestamp, titleOf } from './thread-views.js';

type Durable = { agent: DurableAgent; runner: DurableRunner };

/**
 * A durable agent's chat turn: the index entry names the run before it starts (so whichever Dev UI
 * process sees it end saves the turn), the run is `durable.start` on the thread, and the page
 * reads it from `runner.runStream` (see `streamDurableRun`).
 */
export async function durableChat(state: DevUIState, turn: ChatTurn, durable: Durable, res: ServerResponse): Promise<void> {
  const { agentName, thread, input, existing } = turn;
  if (input.some((m) => m.contents.some((c) => c.kind === 'function-approval-response'))) {
    throw new HttpError(400, `Agent "${agentName}" runs durably; the Dev UI does not answer a durable run's approvals yet: answer with runner.approve(runId, callId, approved) (docs/durable.md).`);
  }
  const inFlight = existing?.durableRun && !existing.durableRun.saved ? existing.durableRun.runId : undefined;
  if (inFlight) {
    throw new HttpError(409, `A durable run (${inFlight}) is still in flight on this thread; read it with GET /api/runs/${inFlight}/events and send again when it ends.`, 'ThreadBusyError');
  }
  const runId = randomUUID();
  const now = timestamp();
  const entry: ThreadIndexEntry = existing ? { ...existing, updatedAt: now } : await newEntry(agentName, titleOf(input) ?? 'New thread', thread, now);
  entry.durableRun = { runId };
  // A service thread's transcript gets the user's side now; the run's messages are added when it ends.
  if (!thread.messageStore) entry.transcript = [...(entry.transcript ?? []), { role: 'user', contents: input.flatMap((m) => m.contents), createdAt: now }];
  await state.index.put(entry);
  await durable.agent.start(input, { thread, runId });
  const sse = new SseWriter(res);
  sse.send('run', { runId, threadId: entry.id, agent: agentName, durable: true });
  streamDurableRun(state, durable, entry.id, runId, undefined, sse, res);
}

/** `GET /api/runs/:id/events`: a page that lost the stream reads the rest of a durable run, after `Last-Event-ID` (or `?after=`). */
export async function reconnectDurableRun(state: DevUIState, runId: string, lastEventId: string | undefined, res: ServerResponse): Promise<void> {
  const after = lastEventId === undefined || lastEventId === '' ? undefined : Number(lastEventId);
  if (after !== undefined && !(Number.isInteger(after) && after >= 0)) {
    throw new HttpError(400, `"Last-Event-ID" (or "after") must be an event id the stream sent (an offset, an integer >= 0); found ${JSON.stringify(lastEventId)}.`);
  }
  const entry = (await state.index.list()).find((e) => e.durableRun?.runId === runId);
  if (!entry) throw new HttpError(404, `No thread of this Dev UI has "${runId}" as its last durable run; reload the thread to see what it holds.`);
  const durable = state.durable(entry.agent)!;
  const sse = new SseWriter(res);
  sse.send('run', { runId, threadId: entry.id, agent: entry.agent, durable: true });
  streamDurableRun(state, durable, entry.id, runId, after, sse, res);
}

/**
 * Relays a durable run's stream after `after` as the chat events, each update's last event
 * carrying `id:` = its offset. The `modelCall.first` rule (docs/durable.md): `delta` and
 * `tool-call` events name their `modelCall`; on a model call made again, a `retract` event tells
 * the page to drop what it showed of that call (sent when this response showed some of it, and
 * always on a reconnect, as the page may have shown some before `after`). When the run ends the
 * turn is saved from `getRun(runId).thread`. The page leaving stops the reading, never the run.
 */
function streamDurableRun(state: DevUIState, durable: Durable, entryId: string, runId: string, after: number | undefined, sse: SseWriter, res: ServerResponse): void {
  const reconnect = after !== undefined;
  const shown = new Set<string>();
  let usage: UsageDetails | undefined;
  state.busyThreads.add(entryId);
  const finish = () => {
    state.busyThreads.delete(entryId);
    sse.end();
  };
  const subscription = durable.runner.runStream(runId, after === undefined ? {} : { after }).subscribe({
    next: ({ offset, modelCall, ...update }) => {
      const events: [string, unknown][] = [];
      if (modelCall?.first && (reconnect || shown.has(modelCall.id))) events.push(['retract', { modelCall: modelCall.id }]);
      if (modelCall) shown.add(modelCall.id);
      const tag = (event: string, data: unknown) => (modelCall && (event === 'delta' || event === 'tool-call') ? { ...(data as object), modelCall: modelCall.id } : data);
      usage = relayUpdate({ send: (event, data) => void events.push([event, tag(event, data)]) }, undefined, runId, update, usage);
      // An update that shows nothing still moves the id on, so a reconnect does not read it again.
      if (!events.length) events.push(['offset', {}]);
      events.forEach(([event, data], i) => sse.send(event, data, i === events.length - 1 ? offset : undefined));
    },
    error: (error: unknown) => {
      sse.send('error', describeError(error).body);
      finish();
    },
    complete: () =>
      void saveDurableTurn(state, durable, entryId, runId)
        .then(({ entry, pending }) => sse.send('done', { thread: summarize(entry), usage: usage ?? {}, pendingApprovals: pending }))
        .catch((error: unknown) => sse.send('error', describeError(error).body))
        .finally(finish),
  });
  res.on('close', () => {
    subscription.unsubscribe();
    finish();
  });
}

/**
 * Saves a finished durable run's turn into its index entry, from the thread the run left
 * (`getRun(runId).thread`, whichever process ran it). Saving twice writes the same entry.
 */
export async function saveDurableTurn(state: DevUIState, durable: Durable, entryId: string, runId: string): Promise<{ entry: ThreadIndexEntry; pending: ReturnType<typeof pendingOf> }> {
  const result = await durable.runner.getRun(runId);
  const thread = await durable.agent.agent.deserializeThread(result.thread);
  const entry = await state.entry(entryId);
  if (entry.durableRun?.runId !== runId || entry.durableRun.saved) return { entry, pending: pendingOf(thread) };
  entry.durableRun = { runId, saved: true };
  entry.serialized = await thread.serialize();
  entry.updatedAt = timestamp();
  if (!thread.messageStore) entry.transcript = [...(entry.transcript ?? []), ...result.messages];
  setPendingCount(entry, thread);
  await state.index.put(entry);
  return { entry, pending: pendingOf(thread) };
}

/** At launch: saves the turns of durable runs that ended (or will end, in any process) while no page read them. */
export async function saveFinishedDurableRuns(state: DevUIState, onError: (message: string) => void): Promise<void> {
  for (const entry of await state.index.list()) {
    const durable = entry.durableRun && !entry.durableRun.saved ? state.durable(entry.agent) : undefined;
    if (!durable || !entry.durableRun) continue;
    const { runId } = entry.durableRun;
    void saveDurableTurn(state, durable, entry.id, runId).catch((error: unknown) => onError(`Durable run ${runId} of thread "${entry.title}" was not saved: ${error instanceof Error ? error.message : String(error)}`));
  }
}
