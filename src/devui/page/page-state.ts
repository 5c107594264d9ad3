import type { AgentInfo, ThreadSummary } from '../devui-api-types.js';

/** A turn in flight: its run id once the server sent it, and the abort of its request. */
export interface RunningTurn {
  runId?: string;
  controller: AbortController;
}

/** What the page's scripts share: the configured agents, the open thread, and the turn running. */
export const page: { agents: AgentInfo[]; currentThread: ThreadSummary | undefined; running: RunningTurn | undefined } = {
  agents: [],
  currentThread: undefined,
  running: undefined,
};
