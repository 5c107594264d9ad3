import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { DurableRunCancelledError, DurableRunNotFoundError } from '../durable/durable-errors.js';
import type { DurableAgent, DurableRunner } from '../durable/durable-runner.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { UsageDetails } from '../messages/content.js';
import { type ChatTurn, chatOptionsOf } from './chat-request.js';
import { relayUpdate } from './chat-relay.js';
import { describeError, HttpError, SseWriter } from './devui-http.js';
import type { DevUIState } from './devui-state.js';
import type { ThreadIndexEntry } from './thread-index.js';
import { newEntry, pendingOf, setPendingCount, summarize, timestamp, titleOf } from './thread-views.js';

type Durable = { agent: DurableAgent; runner: DurableRunner };

/** What a page is told when a durable run it reads was cancelled (the stop button, here or in another process, or its timeout). */
export const DURABLE_STOPPED_MESSAGE = 'Stopped: the durable run is cancelled. The thread keeps the turns it finished, whole, and nothing of the one in flight.';

/**
 * A durable agent's chat turn: the index entry names the run before it starts (so whichever Dev UI
 * process sees it end saves the turn), the run is `durable.start` on the thread, and the page
 * reads it from `runner.runStream` (see `streamDurableRun`).
 */
export async function durableChat(state: DevUIState, turn: ChatTurn, durable: Durable, res: ServerResponse): Promise<void> {
  const { agentName, agent, thread, input, existing, settings } = turn;
  const answers = input.flatMap((m) => m.contents.filter((c) => c.kind === 'function-approval-response'));
  const waiting = existing?.durableRun?.waiting ? existing.durableRun : undefined;
  // Answers (each to a call the thread holds: parseChatTurn checked) go to the run that waits for
  // them; with none waiting (its run was cancelled) they start a new run, as for any agent.
  if (answers.length && existing && waiting) return answerDurableRun(state, durable, existing, waiting.runId, waiting.waiting?.after, answers, input.length > 1, res);
  const inFlight = existing?.durableRun && !existing.durableRun.saved ? existing.durableRun.runId : undefined;
  if (inFlight) {
    const why = waiting ? 'waits for your approval: answer it first' : `is still in flight on this thread; read it with GET /api/runs/${inFlight}/events and send again when it ends`;
    throw new HttpError(409, `A durable run (${inFlight}) ${why}.`, 'ThreadBusyError');
  }
  const runId = randomUUID();
  const now = timestamp();
  const entry: ThreadIndexEntry = existing ? { ...existing, updatedAt: now } : await newEntry(agentName, titleOf(input) ?? 'New thread', thread, now);
  entry.durableRun = { runId, ...(existing ? {} : { newThread: true }), ...(thread.messageStore ? {} : { transcriptBefore: entry.transcript?.length ?? 0 }) };
  // A service thread's transcript gets the user's side now; the run's messages are added when it ends.
  if (!thread.messageStore) entry.transcript = [...(entry.transcript ?? []), { role: 'user', contents: input.flatMap((m) => m.contents), createdAt: now }];
  await state.index.put(entry);
  // The run's settings are kept with it (DurableStartOptions.chatOptions), so they hold for all its turns, in any process.
  await durable.agent.start(input, { thread, runId, ...(settings ? { chatOptions: chatOptionsOf(settings, agent) } : {}) });
  const sse = new SseWriter(res);
  sse.send('run', { runId, threadId: entry.id, agent: agentName, durable: true, ...(settings ? { settings } : {}) });
  streamDurableRun(state, durable, entry.id, runId, undefined, false, sse, res);
}

/**
 * The answers to what a waiting durable run asks: each goes to `runner.approve` (the run goes on
 * once all are answered, in whichever process holds it), and the page reads the run on from
 * where the wait began. Text sent with the answers is refused: a durable run takes no new input.
 */
async function answerDurableRun(state: DevUIState, durable: Durable, entry: ThreadIndexEntry, runId: string, after: number | undefined, answers: ChatMessage['contents'], withText: boolean, res: ServerResponse): Promise<void> {
  if (withText) throw new HttpError(400, `A durable run waiting for approval takes the answers alone; send the message after the run ends.`);
  for (const answer of answers) {
    if (answer.kind === 'function-approval-response') await durable.runner.approve(runId, answer.callId, answer.approved, answer.reason);
  }
  await state.index.put({ ...entry, durableRun: { runId }, updatedAt: timestamp() });
  const sse = new SseWriter(res);
  sse.send('run', { runId, threadId: entry.id, agent: entry.agent, durable: true });
  streamDurableRun(state, durable, entry.id, runId, after, false, sse, res);
}

/** `GET /api/runs/:id/events`: a page that lost the stream reads the rest of a durable run, after `Last-Event-ID` (or `?after=`). */
export async function reconnectDurableRun(state: DevUIState, runId: string, lastEventId: string | undefined, res: ServerResponse): Promise<void> {
  const after = lastEventId === undefined || lastEventId === '' ? undefined : Number(lastEventId);
  if (after !== undefined && !(Number.isInteger(after) && after >= 0)) {
    throw new HttpError(400, `"Last-Event-ID" (or "after") must be an event id the stream sent (an offset, an integer >= 0); found ${JSON.stringify(lastEventId)}.`);
  }
  const entry = await entryOfRun(state, runId);
  if (!entry) throw new HttpError(404, `No thread of this Dev UI has "${runId}" as its last durable run; reload the thread to see what it holds.`);
  const durable = state.durable(entry.agent)!;
  const sse = new SseWriter(res);
  sse.send('run', { runId, threadId: entry.id, agent: entry.agent, durable: true });
  if (entry.durableRun?.waiting && (after ?? -1) >= (entry.durableRun.waiting.after ?? -1)) {
    // The page saw the run up to its wait: it waits for the answers, which end this reading.
    const thread = await durable.agent.agent.deserializeThread(entry.serialized);
    sse.send('done', { thread: summarize(entry), usage: {}, pendingApprovals: pendingOf(thread) });
    sse.end();
    return;
  }
  streamDurableRun(state, durable, entry.id, runId, after, true, sse, res);
}

/**
 * `POST /api/runs/:id/stop` for a durable run: `runner.cancelRun` on the last durable run of a
 * thread in the index (so a stop reaching any Dev UI process on the same index and system
 * database finds it), then the entry is settled as a cancelled run leaves it (see
 * `saveDurableTurn`). The page's stream, in whichever process reads it, ends with `stopped` once
 * the run's stream ends. False for a run no thread names or one that already ended.
 */
export async function stopDurableRun(state: DevUIState, runId: string): Promise<boolean> {
  const entry = await entryOfRun(state, runId);
  const durable = entry && !entry.durableRun?.saved ? state.durable(entry.agent) : undefined;
  if (!entry || !durable) return false;
  const stopped = await durable.runner.cancelRun(runId).catch((error: unknown) => {
    if (error instanceof DurableRunNotFoundError) return false;
    throw error;
  });
  // The run has ended either way, so this returns at once; saved here too as no page may be
  // reading the run. A failure leaves the entry unsaved: a reader or the next launch saves it.
  await saveDurableTurn(state, durable, entry.id, runId).catch(() => undefined);
  return stopped;
}

/** The index entry whose last durable run is `runId`. */
async function entryOfRun(state: DevUIState, runId: string): Promise<ThreadIndexEntry | undefined> {
  return (await state.index.list()).find((e) => e.durableRun?.runId === runId);
}

/**
 * Relays a durable run's stream after `after` as the chat events, each update's last event
 * carrying `id:` = its offset. The `modelCall.first` rule (docs/durable.md): `delta` and
 * `tool-call` events name their `modelCall`; on a model call made again, a `retract` event tells
 * the page to drop what it showed of that call (sent when this response showed some of it, and
 * always on a reconnect, as the page may have shown some before `after`). When the run ends the
 * turn is saved from `getRun(runId).thread`. The page leaving stops the reading, never the run.
 */
function streamDurableRun(state: DevUIState, durable: Durable, entryId: string, runId: string, after: number | undefined, reconnect: boolean, sse: SseWriter, res: ServerResponse): void {
  const shown = new Set<string>();
  let usage: UsageDetails | undefined;
  let waits = false;
  state.busyThreads.add(entryId);
  const finish = () => {
    state.busyThreads.delete(entryId);
    sse.end();
  };
  const subscription = durable.runner.runStream(runId, after === undefined ? {} : { after }).subscribe({
    next: ({ offset, modelCall, ...update }) => {
      if (waits) return;
      const events: [string, unknown][] = [];
      if (modelCall?.first && (reconnect || shown.has(modelCall.id))) events.push(['retract', { modelCall: modelCall.id }]);
      if (modelCall) shown.add(modelCall.id);
      const tag = (event: string, data: unknown) => (modelCall && (event === 'delta' || event === 'tool-call') ? { ...(data as object), modelCall: modelCall.id } : data);
      usage = relayUpdate({ send: (event, data) => void events.push([event, tag(event, data)]) }, undefined, runId, update, usage);
      // An update that shows nothing still moves the id on, so a reconnect does not read it again.
      if (!events.length) events.push(['offset', {}]);
      events.forEach(([event, data], i) => sse.send(event, data, i === events.length - 1 ? offset : undefined));
      // The run now waits for the user (in its workflow, not here): this reading ends with what it asks.
      if (update.contents.some((c) => c.kind === 'function-approval-request')) {
        waits = true;
        queueMicrotask(() => subscription.unsubscribe());
        void saveDurableWait(state, durable, entryId, runId, offset)
          .then(({ entry, pending }) => sse.send('done', { thread: summarize(entry), usage: usage ?? {}, pendingApprovals: pending }))
          .catch((error: unknown) => sse.send('error', describeError(error).body))
          .finally(finish);
      }
    },
    error: (error: unknown) => {
      sse.send('error', describeError(error).body);
      finish();
    },
    complete: () =>
      void saveDurableTurn(state, durable, entryId, runId)
        .then((saved) => (saved.stopped ? sse.send('stopped', { message: DURABLE_STOPPED_MESSAGE }) : sse.send('done', { thread: summarize(saved.entry), usage: usage ?? {}, pendingApprovals: saved.pending })))
        .catch((error: unknown) => sse.send('error', describeError(error).body))
        .finally(finish),
  });
  res.on('close', () => {
    subscription.unsubscribe();
    finish();
  });
}

type SavedRun = { stopped?: false; entry: ThreadIndexEntry; pending: ReturnType<typeof pendingOf> } | { stopped: true };

/**
 * Saves a finished durable run's turn into its index entry, from the thread the run left
 * (`getRun(runId).thread`, whichever process ran it). Saving twice writes the same entry.
 * A cancelled run is settled by `saveCancelledRun`.
 */
export async function saveDurableTurn(state: DevUIState, durable: Durable, entryId: string, runId: string): Promise<SavedRun> {
  const result = await durable.runner.getRun(runId).catch((error: unknown) => {
    if (error instanceof DurableRunCancelledError) return undefined;
    throw error;
  });
  if (!result) {
    await saveCancelledRun(state, durable, entryId, runId);
    return { stopped: true };
  }
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

/**
 * Settles the entry of a cancelled durable run as an in-process stop leaves a thread: a turn the
 * run appended whole stays (it is in the thread's store, or, after a wait, in the entry), the one
 * in flight leaves nothing; a service thread's transcript drops this run's user message; an
 * entry made for this run where no turn landed is removed, as a stopped first turn lists no thread.
 * Saving twice (the stop route and a reader of the run) ends the same way.
 */
async function saveCancelledRun(state: DevUIState, durable: Durable, entryId: string, runId: string): Promise<void> {
  const entry = await state.index.get(entryId);
  if (!entry?.durableRun || entry.durableRun.runId !== runId || entry.durableRun.saved) return;
  const { newThread, transcriptBefore } = entry.durableRun;
  const thread = await durable.agent.agent.deserializeThread(entry.serialized);
  // A cancel that lands after the last turn was appended (before the run returned) leaves that turn: keep it.
  if (newThread && !(thread.messageStore && (await durable.agent.agent.getMessages(thread)).length)) {
    await state.index.delete(entryId);
    return;
  }
  entry.durableRun = { runId, saved: true };
  if (transcriptBefore !== undefined) entry.transcript = entry.transcript?.slice(0, transcriptBefore);
  entry.updatedAt = timestamp();
  setPendingCount(entry, thread);
  await state.index.put(entry);
}

const WAITING_POLL_MS = 50;
const WAITING_TRIES = 200;

/**
 * Saves a durable run that waits for approvals into its index entry: the thread as the run left
 * it (with the requests), and `waiting.after`, the offset to read on from once they are answered.
 */
async function saveDurableWait(state: DevUIState, durable: Durable, entryId: string, runId: string, after: number): Promise<{ entry: ThreadIndexEntry; pending: ReturnType<typeof pendingOf> }> {
  // The workflow records what it waits for right after it streams the request.
  let waiting = await durable.runner.getWaiting(runId);
  for (let i = 0; !waiting && i < WAITING_TRIES; i++) {
    await new Promise((resolve) => setTimeout(resolve, WAITING_POLL_MS));
    waiting = await durable.runner.getWaiting(runId);
  }
  if (!waiting) throw new HttpError(500, `Durable run ${runId} streamed an approval request but reports nothing it waits for; reload the thread.`);
  const thread = await durable.agent.agent.deserializeThread(waiting.thread);
  const entry = await state.entry(entryId);
  // A turn landed (the one that asks, in the thread saved here): a cancel from now on keeps the entry and its transcript.
  entry.durableRun = { runId, waiting: { after } };
  entry.serialized = await thread.serialize();
  entry.updatedAt = timestamp();
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
