import type { Part, StreamResponse, Task, TaskStatus, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { type DurableAgent, type DurableRunner, type DurableRunUpdate, type FunctionApprovalRequestContent, type JsonObject, type SerializedThread, DurableEngineUnavailableError, ThreadConflictError, canonicalJson } from 'skein';
import { approvalRequestParts } from './a2a-approvals.js';
import type { A2AContextStore } from './a2a-context-store.js';
import { agentMessage, artifact, mergeText, toParts } from './a2a-mapping.js';
import { TaskState } from './a2a-peers.js';

/**
 * A durable agent (docs/durable.md) served over A2A: each task is one durable run whose id is
 * the task id, so any instance (or the process that recovered the run) can read it.
 */
export interface A2ADurable {
  agent: DurableAgent;
  runner: DurableRunner;
}

/**
 * A durable task's metadata keeps, under this key, the offset of the last stream entry its last
 * turn read (set with the turn's final status): the next turn, and an instance finishing the
 * task after a crash, read the run on after it.
 */
export const A2A_DURABLE_OFFSET_KEY = 'skeinDurableOffset';

const WAITING_POLL_MS = 50;
const WAITING_TRIES = 200;

/** The run's stream as an async sequence (after `after`); leaving the loop stops the reading, never the run. */
export async function* durableUpdates(runner: DurableRunner, runId: string, after: number | undefined): AsyncGenerator<DurableRunUpdate> {
  const queue: DurableRunUpdate[] = [];
  let ended = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const subscription = runner.runStream(runId, after === undefined ? {} : { after }).subscribe({
    next: (update) => (queue.push(update), wake?.()),
    error: (error: unknown) => ((failure = { error }), wake?.()),
    complete: () => ((ended = true), wake?.()),
  });
  try {
    for (;;) {
      const next = queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (failure) throw failure.error;
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    subscription.unsubscribe();
  }
}

/**
 * The task's artifact as a durable run's stream builds it, under the stream's rule: an entry
 * marked `modelCall.first` drops what was shown of that model call (a call re-made after a
 * crash). A2A has no way to retract part of an artifact, so the drop is an artifact update with
 * `append: false`, which replaces the whole artifact (same `artifactId`) with what is left.
 */
export class DurableArtifact {
  readonly approvals: FunctionApprovalRequestContent[] = [];
  offset: number | undefined;
  #segments: { id: string | undefined; parts: Part[] }[] = [];
  #shown = false;

  /** Takes one stream entry; returns the artifact update it makes (none when it shows nothing new). */
  add(update: DurableRunUpdate): { parts: Part[]; append: boolean } | undefined {
    this.offset = update.offset;
    const id = update.modelCall?.id;
    let replace = false;
    if (update.modelCall?.first) {
      const cut = this.#segments.find((s) => s.id === id && s.parts.length > 0);
      if (cut) {
        cut.parts = [];
        replace = true;
      }
    }
    const assistant = update.role === undefined || update.role === 'assistant';
    const chunk = assistant ? toParts(update.contents) : [];
    if (assistant) for (const c of update.contents) if (c.kind === 'function-approval-request') this.approvals.push(c);
    if (chunk.length > 0) {
      const last = this.#segments[this.#segments.length - 1];
      const segment = last && last.id === id && id !== undefined ? last : this.#segments.find((s) => s.id === id && id !== undefined);
      if (segment) segment.parts.push(...chunk);
      else this.#segments.push({ id, parts: [...chunk] });
    }
    if (replace) return { parts: this.parts(), append: false };
    if (chunk.length === 0) return undefined;
    const append = this.#shown;
    this.#shown = true;
    return { parts: chunk, append };
  }

  /** The artifact's parts so far, text chunks joined. */
  parts(): Part[] {
    return mergeText(this.#segments.flatMap((s) => s.parts));
  }
}

/** How a durable run's stream ended for this reading: finished, or waiting for approvals. */
export interface DurableTurnEnd {
  waiting: boolean;
  /** The run's thread as it is now (the finished run's, or the waiting run's). */
  thread: JsonObject;
}

/**
 * Reads the run's stream into `view` (calling `onUpdate` with each artifact update) until the
 * run ends or streams an approval request (the run then waits in its workflow, not here).
 */
export async function readDurableTurn(
  runner: DurableRunner,
  runId: string,
  after: number | undefined,
  view: DurableArtifact,
  onUpdate: (update: { parts: Part[]; append: boolean }) => void,
  stopped: () => boolean = () => false,
): Promise<DurableTurnEnd> {
  let waiting = false;
  for await (const update of durableUpdates(runner, runId, after)) {
    if (stopped()) break;
    const shown = view.add(update);
    if (shown) onUpdate(shown);
    if (update.contents.some((c) => c.kind === 'function-approval-request')) {
      waiting = true;
      break;
    }
  }
  if (!waiting) return { waiting, thread: (await runner.getRun(runId)).thread };
  // The workflow records what it waits for right after streaming the request.
  for (let i = 0; i < WAITING_TRIES; i++) {
    const state = await runner.getWaiting(runId);
    if (state) return { waiting, thread: state.thread };
    await new Promise((r) => setTimeout(r, WAITING_POLL_MS));
  }
  throw new Error(`Durable run ${runId} streamed an approval request but reports nothing it waits for.`);
}

/**
 * Saves the run's thread as the context's, unless it is already there (a store-backed thread
 * keeps the same key; another instance finishing the same run saved it first). A conflict with
 * another thread still throws `ThreadConflictError`.
 */
export async function saveDurableThread(contexts: A2AContextStore, contextId: string, thread: JsonObject): Promise<void> {
  const wanted = canonicalJson(thread);
  const stored = await contexts.load(contextId);
  if (stored && canonicalJson(stored.thread) === wanted) return;
  try {
    await contexts.save(contextId, thread as unknown as SerializedThread, stored?.version, stored?.owner ?? '');
  } catch (error) {
    if (!(error instanceof ThreadConflictError)) throw error;
    const now = await contexts.load(contextId);
    if (!now || canonicalJson(now.thread) !== wanted) throw error;
  }
}

/** The status update a durable turn ends with: completed, or input-required with the approvals; its metadata (merged into the task's) keeps the offset. */
export function durableFinalUpdate(view: DurableArtifact, ids: { taskId: string; contextId: string }): TaskStatusUpdateEvent {
  const timestamp = new Date().toISOString();
  const status: TaskStatus =
    view.approvals.length === 0
      ? { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp }
      : { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: agentMessage(approvalRequestParts(view.approvals), ids), timestamp };
  return { ...ids, status, metadata: view.offset === undefined ? undefined : { [A2A_DURABLE_OFFSET_KEY]: view.offset } };
}

/**
 * The artifact id of a durable task's turn, from where the turn reads the run (the same on every
 * instance), so an instance finishing the task replaces that turn's artifact and keeps the others.
 */
export function durableArtifactId(taskId: string, after: number | undefined): string {
  return `${taskId}.${after ?? 'start'}`;
}

/** The offset a durable task's next turn reads on after (none: from the start of the run). */
export function durableOffsetOf(task: Task | undefined): number | undefined {
  const value = task?.metadata?.[A2A_DURABLE_OFFSET_KEY];
  return typeof value === 'number' && value >= 0 ? value : undefined;
}

/**
 * Finishes, from the durable run, a task that is running on no executor of this process: the
 * instance that started it died (the run was recovered by another process) or is another
 * instance. `tasks/get` starts it in the background (poll again); `tasks/resubscribe` streams
 * it: the task as stored, then the artifact rebuilt from the run's stream (its first update
 * `append: false`, replacing what the stored task showed), then the final status. Either way the
 * finished task and the run's thread are saved; two instances doing it write the same result.
 */
export class DurableTaskFollower {
  readonly #finishing = new Map<string, Promise<void>>();

  constructor(
    private readonly durable: A2ADurable,
    private readonly contexts: A2AContextStore,
    private readonly tasks: TaskStore,
    private readonly runsHere: (taskId: string) => boolean,
    /** The failed status for a run that failed (logged with an error id). */
    private readonly failedStatus: (taskId: string, contextId: string, error: unknown) => TaskStatus,
    /** Where a failure to read or save goes (the task stays as it is; the next request tries again). */
    private readonly onError: (taskId: string, error: unknown) => void,
  ) {}

  /** Whether this task is a durable run in flight that no executor here is running. */
  detached(task: Task | undefined): task is Task {
    const state = task?.status?.state;
    return task !== undefined && (state === TaskState.TASK_STATE_WORKING || state === TaskState.TASK_STATE_SUBMITTED) && !this.runsHere(task.id);
  }

  /** For `tasks/get`: finishes the task in the background, once per task at a time. */
  follow(task: Task, context: ServerCallContext): void {
    if (this.#finishing.has(task.id)) return;
    const work = this.#finish(task, context, () => {})
      .catch((error: unknown) => this.onError(task.id, error))
      .finally(() => this.#finishing.delete(task.id));
    this.#finishing.set(task.id, work);
  }

  /** For `tasks/resubscribe`: the task, then the rest of its run as A2A stream responses. */
  async *resubscribe(task: Task, context: ServerCallContext): AsyncGenerator<StreamResponse> {
    yield { payload: { $case: 'task', value: task } };
    const pending: StreamResponse[] = [];
    let wake: (() => void) | undefined;
    let done: { error?: unknown } | undefined;
    void this.#finish(task, context, (response) => (pending.push(response), wake?.())).then(
      () => ((done = {}), wake?.()),
      (error: unknown) => ((done = { error }), wake?.()),
    );
    for (;;) {
      const next = pending.shift();
      if (next) {
        yield next;
        continue;
      }
      if (done) {
        if (done.error !== undefined) throw done.error;
        return;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  }

  async #finish(task: Task, context: ServerCallContext, emit: (response: StreamResponse) => void): Promise<void> {
    const { id: taskId, contextId } = task;
    const after = durableOffsetOf(task);
    const artifactId = durableArtifactId(taskId, after);
    const view = new DurableArtifact();
    let end: DurableTurnEnd;
    try {
      end = await readDurableTurn(this.durable.runner, taskId, after, view, ({ parts, append }) =>
        emit({ payload: { $case: 'artifactUpdate', value: { taskId, contextId, artifact: artifact(artifactId, parts), append, lastChunk: false, metadata: undefined } } }),
      );
    } catch (error) {
      // The engine unreachable: nothing is decided, ask again later. Anything else is the run's own failure.
      if (error instanceof DurableEngineUnavailableError) throw error;
      const failed = { taskId, contextId, status: this.failedStatus(taskId, contextId, error), metadata: undefined };
      const current = (await this.tasks.load(taskId, context)) ?? task;
      await this.tasks.save({ ...current, status: failed.status, history: [...current.history, failed.status.message!] }, context);
      emit({ payload: { $case: 'statusUpdate', value: failed } });
      return;
    }
    try {
      await saveDurableThread(this.contexts, contextId, end.thread);
    } catch (error) {
      // The context moved on to a later turn meanwhile: its thread already holds this one.
      if (!(error instanceof ThreadConflictError)) throw error;
    }
    const parts = view.parts();
    const update = durableFinalUpdate(view, { taskId, contextId });
    const current = (await this.tasks.load(taskId, context)) ?? task;
    const history = update.status?.message ? [...current.history, update.status.message] : current.history;
    const metadata = update.metadata ? { ...current.metadata, ...update.metadata } : current.metadata;
    const artifacts = [...current.artifacts.filter((x) => x.artifactId !== artifactId), ...(parts.length > 0 ? [artifact(artifactId, parts)] : [])];
    await this.tasks.save({ ...current, artifacts, status: update.status, history, metadata }, context);
    if (parts.length > 0) emit({ payload: { $case: 'artifactUpdate', value: { taskId, contextId, artifact: artifact(artifactId, parts), append: false, lastChunk: true, metadata: undefined } } });
    emit({ payload: { $case: 'statusUpdate', value: update } });
  }
}
