import type { SseWriter } from './devui-http.js';
import { reply, type Route } from './devui-router.js';
import type { DevUIState } from './devui-state.js';

/** `GET /api/threads/:id/traces`: the traces of the thread's turns taken in this session (kept in memory, never sent elsewhere). */
export function traceRoutes(state: DevUIState): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/threads/:id/traces',
      handle: async ({ params }) => {
        await state.entry(params.id!);
        const { collector, captureContent } = state.tracing;
        return reply(200, { enabled: collector !== undefined, captureContent, traces: collector?.forThread(params.id!) ?? [] });
      },
    },
  ];
}

/** Files the run's trace under its thread and sends it to the page (after its last span ended); a run on no thread keeps none. */
export async function sendTurnTrace(state: DevUIState, sse: SseWriter, runId: string, threadId: string | undefined): Promise<void> {
  const { collector, captureContent } = state.tracing;
  if (!collector) return;
  if (threadId === undefined) return collector.discard(runId);
  collector.assign(runId, threadId);
  await collector.settled(runId);
  const trace = collector.forThread(threadId).find((t) => t.runId === runId);
  if (trace) sse.send('trace', { trace, captureContent });
}
