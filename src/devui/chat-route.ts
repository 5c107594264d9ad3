import { randomUUID } from 'node:crypto';
import type { Observer, Subscription } from 'rxjs';
import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import type { UsageDetails } from '../messages/content.js';
import { chatOptionsOf, parseChatTurn, type ChatTurn } from './chat-request.js';
import { relayUpdate } from './chat-relay.js';
import { describeError, readJsonObject, SseWriter } from './devui-http.js';
import { durableChat, reconnectDurableRun, stopDurableRun } from './durable-chat.js';
import { reply, type RequestContext, type Route } from './devui-router.js';
import type { DevUIState } from './devui-state.js';
import { sendTurnTrace } from './trace-routes.js';
import type { TurnTraces } from './turn-traces.js';
import { commitTurn, keepWhatTheAgentKept, whenIdle } from './turn-commit.js';
import { pendingOf, summarize } from './thread-views.js';

/** A chat turn streamed as server-sent events, and the stop button. */
export function chatRoutes(state: DevUIState): Route[] {
  return [
    { method: 'POST', path: '/api/chat', handle: (context) => chat(state, context) },
    { method: 'POST', path: '/api/runs/:id/stop', handle: async ({ params }) => reply(200, { stopped: await stopRun(state, params.id!) }) },
    // A durable run's stream, read on after the last event the page got (`Last-Event-ID`, or `?after=`).
    { method: 'GET', path: '/api/runs/:id/events', handle: ({ req, res, params, query }) => reconnectDurableRun(state, params.id!, headerOf(req.headers['last-event-id']) ?? query.get('after') ?? undefined, res) },
  ];
}

/** An in-process turn of this Dev UI, else a durable run a thread of its index names (see `stopDurableRun`). */
async function stopRun(state: DevUIState, runId: string): Promise<boolean> {
  const run = state.runs.get(runId);
  if (!run) return stopDurableRun(state, runId);
  run.stop();
  return true;
}

/**
 * Runs one turn and relays it as server-sent events; the thread is saved only when the turn
 * completes. The turn's input is the typed text, the answers to pending approvals, or both.
 */
async function chat(state: DevUIState, { req, res }: RequestContext): Promise<void> {
  const turn = await parseChatTurn(state, await readJsonObject(req));
  const durable = state.durable(turn.agentName);
  if (durable) return durableChat(state, turn, durable, res);
  const { agentName, thread, threadId, settings } = turn;
  const runId = randomUUID();
  const sse = new SseWriter(res);
  const updates: AgentRunResponseUpdate[] = [];
  let usage: UsageDetails | undefined;
  let finished = false;
  // Once the stream completed the turn is being saved: a late stop must not report "unchanged".
  let completed = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    state.runs.delete(runId);
    if (threadId !== undefined) state.busyThreads.delete(threadId);
    sse.end();
  };
  const collector = state.tracing.collector;
  const stop = () => {
    if (finished || completed) return;
    subscription.unsubscribe();
    sse.send('stopped', { message: 'Stopped. The thread is unchanged.' });
    finish();
    // A stopped turn saves nothing, so it keeps no trace.
    collector?.discard(runId);
    // The aborted run unwinds after this; if the agent kept results of approved tools that
    // already ran, save them once it let go of the thread, so they can never run twice.
    void whenIdle(thread).then(() => keepWhatTheAgentKept(state.index, turn, updates)).catch(() => undefined);
  };
  state.runs.set(runId, { threadId, stop });
  if (threadId !== undefined) state.busyThreads.add(threadId);
  // The browser went away (tab closed, fetch aborted): abort the run like the stop button does.
  res.on('close', () => {
    if (!finished) {
      subscription.unsubscribe();
      finish();
    }
  });
  sse.send('run', { runId, threadId, agent: agentName, ...(settings ? { settings } : {}) });

  const observer: Partial<Observer<AgentRunResponseUpdate>> = {
    next: (update) => {
      updates.push(update);
      usage = relayUpdate(sse, collector, runId, update, usage);
    },
    error: (error: unknown) => {
      if (finished) return;
      // The core may keep part of a failed turn (results of tools the user approved, which
      // already ran): save that, so answering again can never run a tool twice.
      void keepWhatTheAgentKept(state.index, turn, updates)
        .then(async (entry) => {
          // A failed turn on a listed thread keeps its trace: the error is what the user wants to see.
          await sendTurnTrace(state, sse, runId, entry?.id ?? threadId);
          sse.send('error', { ...describeError(error).body, ...(entry ? { thread: summarize(entry), pendingApprovals: pendingOf(thread) } : {}) });
        })
        .catch(() => sse.send('error', describeError(error).body))
        .finally(finish);
    },
    complete: () => {
      completed = true;
      void commitTurn(state.index, turn, updates)
        .then(async (entry) => {
          await sendTurnTrace(state, sse, runId, entry.id);
          sse.send('usage', { usage: usage ?? {} });
          sse.send('done', { thread: summarize(entry), usage: usage ?? {}, pendingApprovals: pendingOf(thread) });
        })
        .catch((error: unknown) => sse.send('error', describeError(error).body))
        .finally(finish);
    },
  };
  // stop() and the close handler run only after subscribe() has returned (both are async events).
  const subscription: Subscription = startRun(turn, collector, runId, observer);
}

function startRun(turn: ChatTurn, collector: TurnTraces | undefined, runId: string, observer: Partial<Observer<AgentRunResponseUpdate>>): Subscription {
  const { agent, thread, input, settings } = turn;
  const chatOptions = settings ? chatOptionsOf(settings, agent) : undefined;
  const subscribe = () => agent.runStream(input, { thread, ...(chatOptions ? { chatOptions } : {}) }).subscribe(observer);
  return collector ? collector.inRun(runId, settings ? { ...settings } : undefined, subscribe) : subscribe();
}

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
