/**
 * What the Dev UI's HTTP API sends and takes. The lowest layer of the Dev UI: the server's
 * routes, the turn-trace collector and the page all use these types, and this file imports none of them.
 */

/** A configured agent, as `GET /api/agents` lists it. */
export interface AgentInfo {
  name: string;
  displayName?: string;
  description?: string;
  client: string;
  /** The agent has `durability:` in the config: the Dev UI runs its turns durably (docs/devui.md). */
  durable?: boolean;
}

/** What the page lists for a thread. */
export interface ThreadSummary {
  id: string;
  agent: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  /** `service`: the service keeps the history; `store`: a message store does; `unstarted`: nothing yet. */
  kind: 'service' | 'store' | 'unstarted';
  /** The serialized `$type` (the store type for store threads). */
  type: string;
  serviceThreadId?: string;
  /** A durable store's key (sqlite, redis, postgres): the history the thread reads and writes. */
  storeKey?: string;
  /** Tool calls waiting for the user's approval (answer them with `approvals` on `/api/chat`). */
  pendingApprovals: number;
  /** Exactly what `DELETE` deletes: the title, and the store and key or the service thread. */
  deletion: string;
  /** With `?q=`: where the words were found (the title, or the messages with an excerpt). */
  match?: { in: 'title' } | { in: 'messages'; excerpt: string };
}

/** How `POST /api/threads/import` placed a file: a new entry, the entry already listed for its history, or a real copy. */
export type LoadOutcome = 'new' | 'existing' | 'copy';

/** A tool call waiting for the user's approval, as the page shows it. */
export interface PendingApproval {
  callId: string;
  name: string;
  arguments: string;
}

/** The user's answer to one pending approval, as `POST /api/chat` takes it. */
export interface ApprovalAnswer {
  callId: string;
  approved: boolean;
  reason?: string;
}

/** Settings for one run, as the page sends them with a turn (`settings` on `POST /api/chat`). */
export interface RunSettings {
  temperature?: number;
  maxOutputTokens?: number;
  model?: string;
  /** Added after the agent's own instructions for this run only. */
  instructions?: string;
}

/** An error as the API answers it (`{ error }`) and as a chat stream's `error` event carries it. */
export interface ErrorBody {
  name: string;
  message: string;
  status?: number;
  requestId?: string;
}
