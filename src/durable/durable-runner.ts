import type { Observable } from 'rxjs';
import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import type { ChatAgent } from '../agents/chat-agent.js';
import type { ChatOptions } from '../clients/chat-options.js';
import type { AgentInput, ChatMessage } from '../messages/chat-message.js';
import type { FunctionApprovalRequestContent, UsageDetails } from '../messages/content.js';
import type { JsonObject } from '../serialization/json.js';
import type { AgentThread } from '../threads/agent-thread.js';

/** Per-agent durability, also the `durability` entry of an agent's config. */
export interface DurableAgentOptions {
  /** The engine, e.g. `dbos`. */
  engine?: string;
  /** Tools whose results are never written to the engine's checkpoints: they run again on every replay. */
  unrecordedTools?: readonly string[];
  /** Write the run's updates (model output, tool results, approval requests) to its durable stream (see `runStream`). Default true. */
  stream?: boolean;
  /**
   * With `stream` on: write each model call's text deltas and tool-call updates to the stream as
   * they arrive (coalesced: one write per ~50 ms or 400 characters), each marked with its
   * `modelCall`. False: one entry per whole reply, written after the call is recorded. Default true.
   */
  streamDeltas?: boolean;
  /** The queue runs go through by default (see the runner's queue options). */
  queue?: string;
}

export interface DurableStartOptions {
  /** Continue this thread; a new thread of the agent otherwise. */
  thread?: AgentThread;
  /** The run's id, unique per run: starting again with the same id returns the same run. Default: a new UUID. */
  runId?: string;
  /** A queue registered with the runner; the run waits there for a worker under the queue's limits. */
  queue?: string;
  /** Runs with the same key never exceed the queue's per-partition limits (e.g. the thread or tenant id). */
  partitionKey?: string;
  /** The run is cancelled once it has run this long (from its start, or from leaving its queue). */
  timeoutMs?: number;
  /**
   * Model options for every turn of this run (temperature, maxOutputTokens, ...), over the agent's
   * own, as `agent.run`'s `chatOptions`. Kept with the run's input, so a recovering process runs
   * with them too: they must be plain JSON (no `signal`; the run's cancel is `cancelRun`).
   */
  chatOptions?: DurableChatOptions;
  /** Instructions added to the agent's for every turn of this run (never stored in the thread), as `agent.run`'s. */
  additionalInstructions?: string;
}

/** The model options a durable run takes: ChatOptions without the signal, as JSON. */
export type DurableChatOptions = Omit<ChatOptions, 'signal'>;

/** A finished durable run. `thread` is the serialized thread after the run: `agent.deserializeThread(thread)` continues it. */
export interface DurableRunResult {
  runId: string;
  /** Every message the run produced (over all its turns, when it waited for approvals). */
  messages: ChatMessage[];
  text: string;
  usage?: UsageDetails;
  thread: JsonObject;
}

/** One entry of a run's durable stream; `offset` resumes after it: `runStream(runId, { after: offset })`. */
export interface DurableRunUpdate extends AgentRunResponseUpdate {
  offset: number;
  /**
   * On a delta of a model call (`streamDeltas`): which call (`id`, the same in every attempt) and
   * which execution of it (`attempt`). A model call cut by a crash is made again on recovery:
   * the first update of each attempt has `first: true`, and a reader then drops whatever it
   * showed of that `id` before (text and tool-call updates) — so the text of a model call is the
   * concatenation of its deltas since its last `first`.
   */
  modelCall?: DurableModelCall;
}

/** Marks the deltas of one model call of a durable run (see `DurableRunUpdate.modelCall`). */
export interface DurableModelCall {
  id: string;
  attempt: string;
  first?: boolean;
}

/** A run waiting for the user: the approvals it asks for and the thread as it is now. */
export interface DurableRunWaiting {
  approvalRequests: FunctionApprovalRequestContent[];
  thread: JsonObject;
}

/** An agent whose runs are durable: started by id, awaited, streamed, approved and cancelled from any process. */
export interface DurableAgent {
  readonly agent: ChatAgent;
  /** Starts (or enqueues) a run and returns its id once the engine has recorded it. */
  start(input: AgentInput, options?: DurableStartOptions): Promise<string>;
  /** start, then getRun. */
  run(input: AgentInput, options?: DurableStartOptions): Promise<DurableRunResult>;
}

/**
 * A durable execution engine for agent runs. The core knows only this contract; an engine plugin
 * (`skein/dbos`) provides it, so another one (Temporal, Restate) can be added the same way.
 */
export const DurableRunner = Symbol('DurableRunner');
export interface DurableRunner {
  readonly engine: string;
  /** Makes `agent`'s runs durable. Call for every agent before `launch()`, in every process. */
  durable(agent: ChatAgent, options?: DurableAgentOptions): DurableAgent;
  /** Connects to the engine and recovers the runs this process left unfinished. */
  launch(): Promise<void>;
  shutdown(): Promise<void>;
  /** Awaits the run's result, whichever process runs it. */
  getRun(runId: string): Promise<DurableRunResult>;
  /** The run's updates from its durable stream, after `after` (an offset), until the run ends. */
  runStream(runId: string, options?: { after?: number }): Observable<DurableRunUpdate>;
  /** The approvals the run waits for (none when it is not waiting), and its thread as it is now. */
  getWaiting(runId: string): Promise<DurableRunWaiting | undefined>;
  /** Answers one approval the run waits for; the run goes on once every request is answered. */
  approve(runId: string, callId: string, approved: boolean, reason?: string): Promise<void>;
  /**
   * Stops the run at its next step; a turn is appended whole or not at all. True when this call
   * cancelled a run in flight (running, queued or waiting); false when the run had already ended
   * (finished, failed or cancelled): there was nothing to stop.
   */
  cancelRun(runId: string): Promise<boolean>;
}
