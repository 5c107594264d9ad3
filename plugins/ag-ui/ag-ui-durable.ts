import type { Message } from '@ag-ui/core';
import type { AgentRunResponseUpdate, AgentThread, AIAgent, ChatMessage, ChatOptions, DurableAgent, DurableRunner, FunctionApprovalResponseContent } from 'skein';

/** A durable agent (docs/durable.md) served over AG-UI: its runs are the runner's, by the client's `runId`. */
export interface AgUiDurable {
  agent: DurableAgent;
  runner: DurableRunner;
}

/** Where a thread's durable run is: its id, and the offset of the last update the server streamed (`undefined`: none yet). */
export interface AgUiDurableRun {
  runId: string;
  after?: number;
  /**
   * What the client should hold before the run's updates (after `after`): the first `kept`
   * messages of the thread's view, then `input`. A client that rejoins gets this as a
   * MESSAGES_SNAPSHOT, so what it kept of a cut read is not shown twice. Absent in records of
   * older versions: the rejoin then keeps the thread's view as it is.
   */
  kept?: number;
  input?: Message[];
  /**
   * The runId of the AG-UI request whose `resume` answered the run's approvals and reads it on. A
   * client that leaves that request rejoins with its runId (the one it sent), as it would any run.
   */
  answeredBy?: string;
}

/** How a durable run's stream ended for this request. */
export type DurableOutcome = { kind: 'done'; thread: AgentThread } | { kind: 'waiting'; thread: AgentThread; after: number | undefined };

const WAITING_POLL_MS = 50;
const WAITING_TRIES = 200;

/**
 * Streams a durable run to `onUpdate`: a new run (`input`) is started with the client's `runId`
 * (starting it again with that id, a reconnect, returns the same run); answers to a waiting run
 * go to `runner.approve` and its stream is read on after `run.after`. Ends when the run finishes
 * or waits for approval (a durable run waits in its workflow, not in the request). The client
 * leaving stops the reading, never the run.
 */
export async function streamDurableRun(options: {
  durable: AgUiDurable;
  agent: AIAgent;
  thread: AgentThread;
  input: ChatMessage[];
  answers: FunctionApprovalResponseContent[];
  run: AgUiDurableRun | undefined;
  runId: string;
  signal: AbortSignal;
  /** A new run's model options and extra instructions (the forwardedProps hook's, the client's `context`), kept with the run. */
  chatOptions?: ChatOptions;
  additionalInstructions?: string;
  onStart: (run: AgUiDurableRun) => Promise<void>;
  /** The run's approvals were answered (saved at once, so a client that leaves the read can rejoin it). */
  onAnswered?: (run: AgUiDurableRun) => Promise<void>;
  /** `modelCall` names the model call a delta belongs to (docs/durable.md), for `onRetract`. */
  onUpdate: (update: AgentRunResponseUpdate, modelCall: string | undefined) => void;
  /** A model call this request streamed was made again (a crash cut it): drop what was shown of it. */
  onRetract: (modelCall: string) => void;
  /** The run's result is an error (it failed): there is nothing left to read on. */
  onFailed?: () => void;
}): Promise<DurableOutcome> {
  const { durable, signal } = options;
  let current: AgUiDurableRun;
  if (options.answers.length && options.run) {
    current = options.run;
    for (const a of options.answers) await durable.runner.approve(current.runId, a.callId, a.approved, a.reason);
    await options.onAnswered?.(current);
  } else if (options.input.length) {
    const { signal: _signal, ...chatOptions } = options.chatOptions ?? {};
    const runOptions = { ...(options.chatOptions ? { chatOptions } : {}), ...(options.additionalInstructions ? { additionalInstructions: options.additionalInstructions } : {}) };
    current = { runId: await durable.agent.start(options.input, { thread: options.thread, runId: options.runId, ...runOptions }) };
    await options.onStart(current);
  } else if (options.run) {
    current = options.run; // a reconnect: read the rest of the run
  } else {
    return { kind: 'done', thread: options.thread };
  }
  let after = current.after;
  /** The model calls this request streamed something of: a `first` for one of them is a re-made call. */
  const shown = new Set<string>();
  const waiting = await new Promise<boolean>((resolve, reject) => {
    const subscription = durable.runner.runStream(current.runId, after === undefined ? {} : { after }).subscribe({
      next: (update) => {
        after = update.offset;
        const { offset: _offset, modelCall, ...plain } = update;
        if (modelCall?.first && shown.has(modelCall.id)) options.onRetract(modelCall.id);
        if (modelCall) shown.add(modelCall.id);
        options.onUpdate(plain, modelCall?.id);
        if (update.contents.some((c) => c.kind === 'function-approval-request')) {
          subscription.unsubscribe();
          resolve(true);
        }
      },
      error: reject,
      complete: () => resolve(false),
    });
    const onAbort = () => (subscription.unsubscribe(), reject(signal.reason instanceof Error ? signal.reason : new Error('The client disconnected.')));
    // The client may have left while the run was started or answered: an abort event already sent never comes again.
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  if (!waiting) {
    // A failed run's stream ends like a finished one's; its result is the failure.
    const result = await durable.runner.getRun(current.runId).catch((error: unknown) => {
      options.onFailed?.();
      throw error;
    });
    return { kind: 'done', thread: await options.agent.deserializeThread(result.thread) };
  }
  // The workflow records what it waits for right after streaming the request.
  for (let i = 0; i < WAITING_TRIES; i++) {
    const state = await durable.runner.getWaiting(current.runId);
    if (state) return { kind: 'waiting', thread: await options.agent.deserializeThread(state.thread), after };
    await new Promise((r) => setTimeout(r, WAITING_POLL_MS));
  }
  throw new Error(`Durable run ${current.runId} streamed an approval request but reports nothing it waits for.`);
}
