import type { Part, TaskStatus, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { AgentEvent, TaskState } from './a2a-peers.js';
import { randomUUID } from 'node:crypto';
import {
  type AIAgent,
  AgentThread,
  type ChatMessageStoreFactory,
  type SerializationRegistry,
  type FunctionApprovalRequestContent,
  type SerializedThread,
  RateLimitError,
  ThreadConflictError,
  defaultSerializationRegistry,
} from 'skein';
import type { User } from '@a2a-js/sdk/server';
import type { TextMapGetter } from '@opentelemetry/api';
import { STATE_HEADERS_KEY, otel } from './a2a-peers.js';
import { approvalInput, approvalRequestParts, pendingCallIds } from './a2a-approvals.js';
import type { A2AContextStore, StoredA2AContext } from './a2a-context-store.js';
import { agentMessage, artifact, mergeText, textPart, toParts } from './a2a-mapping.js';
import { loadedJsonOf, rememberSavingJson } from './thread-json.js';
import { type A2ADurable, DurableArtifact, durableArtifactId, durableFinalUpdate, durableOffsetOf, readDurableTurn, saveDurableThread } from './a2a-durable.js';

/** Where the A2A server reports what remote callers must not see (failures) and start-up notices. */
export interface A2AServerLogger {
  warn(message: string): void;
  error(message: string, error: unknown): void;
}

/** The default: warnings as a Node process warning (type `SkeinA2AWarning`, each text once), errors on stderr. */
const warned = new Set<string>();
export const defaultA2AServerLogger: A2AServerLogger = {
  warn: (message) => {
    // Once per process: many servers (or tests) with the same setup say it once.
    if (warned.has(message)) return;
    warned.add(message);
    process.emitWarning(message, { type: 'SkeinA2AWarning', code: 'SKEIN_A2A_WARNING' });
  },
  error: (message, error) => console.error(message, error),
};

export interface SkeinAgentExecutorOptions {
  agent: AIAgent;
  contextStore: A2AContextStore;
  /**
   * Where new Skein-managed threads keep their messages. Without it the agent's own factory is
   * used (in memory for a plain ChatAgent: the messages then live in the context store).
   */
  chatMessageStoreFactory?: ChatMessageStoreFactory;
  /** Reads stored threads when `chatMessageStoreFactory` is given. */
  serializationRegistry?: SerializationRegistry;
  logger?: A2AServerLogger;
  /** Run each task as a durable run of this durable agent (its `agent` is `agent`); see docs/a2a.md. */
  durable?: A2ADurable;
}

/** The owner recorded for a caller: the SDK user's name, `''` when unauthenticated. */
export function ownerOf(user: User | undefined): string {
  return user?.isAuthenticated ? user.userName : '';
}

/**
 * Runs a Skein agent for A2A requests: one AgentThread per A2A `contextId`, read from and saved
 * to the context store around every turn; the reply streams out as one artifact. Tool calls
 * that need approval end the turn `input-required`; the caller's next message on the task
 * answers them (see a2a-approvals.ts).
 */
export class SkeinAgentExecutor implements AgentExecutor {
  readonly #agent: AIAgent;
  readonly #contexts: A2AContextStore;
  readonly #storeFactory: ChatMessageStoreFactory | undefined;
  readonly #registry: SerializationRegistry;
  readonly #logger: A2AServerLogger;
  readonly #running = new Map<string, { controller: AbortController; contextId: string; bus: ExecutionEventBus }>();
  readonly #contextTails = new Map<string, Promise<void>>();
  readonly #durable: A2ADurable | undefined;

  constructor(options: SkeinAgentExecutorOptions) {
    this.#agent = options.agent;
    this.#contexts = options.contextStore;
    this.#storeFactory = options.chatMessageStoreFactory;
    this.#registry = options.serializationRegistry ?? defaultSerializationRegistry();
    this.#logger = options.logger ?? defaultA2AServerLogger;
    this.#durable = options.durable;
  }

  /** The failed status of a task whose run failed: logs the error with an id and tells the caller only the id and what it can do. */
  failedStatus(taskId: string, contextId: string, error: unknown): TaskStatus {
    // The caller gets an id to quote; the log has the error (it may name hosts, keys, internals).
    const errorId = randomUUID();
    this.#logger.error(`A2A task ${taskId} (context ${contextId}) failed; error id ${errorId}:`, error);
    const { reason, text } = publicFailure(error);
    const message = agentMessage([textPart(`${text} (error id ${errorId}).`)], { contextId, taskId });
    message.metadata = { errorId, reason };
    return status(TaskState.TASK_STATE_FAILED, message);
  }

  /** Whether this process runs the task now. */
  runsHere(taskId: string): boolean {
    return this.#running.has(taskId);
  }

  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = request;
    const controller = new AbortController();
    this.#running.set(taskId, { controller, contextId, bus });
    try {
      // Ownership is recorded before the task exists, so no one else can read it meanwhile.
      await this.#claim(contextId, ownerOf(request.context?.user));
      // A stream must open with the task, also when a message continues an existing one.
      bus.publish(
        AgentEvent.task(
          request.task
            ? { ...request.task, status: status(TaskState.TASK_STATE_WORKING) }
            : { id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [request.userMessage], metadata: undefined },
        ),
      );
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }));
      const durable = this.#durable;
      const turn = await this.#inContext(contextId, () => (durable ? this.#runDurableTurn(durable, request, bus, controller.signal) : this.#runTurn(request, bus, controller.signal)));
      if (controller.signal.aborted) return;
      if (turn.parts.length > 0) {
        // One consolidated artifact replaces the streamed chunks, so stored tasks stay small.
        bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: artifact(turn.artifactId, turn.parts), append: false, lastChunk: true, metadata: undefined }));
      }
      bus.publish(AgentEvent.statusUpdate(turn.final));
    } catch (error) {
      // A cancel already published the canceled state; anything else is this task's failure.
      if (controller.signal.aborted) return;
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: this.failedStatus(taskId, contextId, error), metadata: undefined }));
    } finally {
      this.#running.delete(taskId);
    }
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const running = this.#running.get(taskId);
    running?.controller.abort();
    // The run stops at its next step, whichever process runs it (an unknown run: nothing to stop).
    if (this.#durable) await this.#durable.runner.cancelRun(taskId).catch((error: unknown) => this.#logger.error(`A2A task ${taskId}: cancelling its durable run failed:`, error));
    // A task not running here (waiting for input, or on another instance) is canceled by state alone.
    const contextId = running?.contextId ?? '';
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TaskState.TASK_STATE_CANCELED, agentMessage([textPart('Canceled at the client\'s request.')], { contextId, taskId })),
        metadata: undefined,
      }),
    );
  };

  /**
   * Stops the run of a task that was moved on elsewhere (canceled through another instance, or
   * failed as lost while this one stalled) and publishes the status it has now, so this
   * instance's callers see it too. Nothing of the run is kept (its turn is not saved).
   */
  abandon(taskId: string, current: TaskStatus): void {
    const running = this.#running.get(taskId);
    if (!running || running.controller.signal.aborted) return;
    running.controller.abort();
    running.bus.publish(AgentEvent.statusUpdate({ taskId, contextId: running.contextId, status: current, metadata: undefined }));
  }

  /** Stores a new context with its owner (a fresh thread); an existing one must be the caller's. */
  async #claim(contextId: string, owner: string): Promise<void> {
    let stored = await this.#contexts.load(contextId);
    if (!stored) {
      const fresh = await (await this.#threadFor(undefined)).serialize();
      try {
        await this.#contexts.save(contextId, fresh, undefined, owner);
      } catch (error) {
        if (!(error instanceof ThreadConflictError)) throw error;
      }
      stored = await this.#contexts.load(contextId);
    }
    if (stored?.owner !== owner) throw new Error(`A2A context ${contextId} belongs to another user; refused for "${owner}".`);
  }

  /** Turns on one context run one at a time in this process; the context store's version check covers other processes. */
  async #inContext<T>(contextId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#contextTails.get(contextId) ?? Promise.resolve();
    let done!: () => void;
    const tail = new Promise<void>((resolve) => (done = resolve));
    this.#contextTails.set(contextId, tail);
    await previous;
    try {
      return await work();
    } finally {
      done();
      if (this.#contextTails.get(contextId) === tail) this.#contextTails.delete(contextId);
    }
  }

  async #runTurn(request: RequestContext, bus: ExecutionEventBus, signal: AbortSignal): Promise<TurnEnd> {
    const { taskId, contextId } = request;
    const artifactId = randomUUID();
    const stored = await this.#contexts.load(contextId);
    const thread = await this.#threadFor(stored);
    // The stored thread's JSON text, from the store when it kept it (the in-memory store does).
    const before = stored ? (loadedJsonOf(stored.thread) ?? JSON.stringify(stored.thread)) : undefined;
    const parts: Part[] = [];
    const approvals: FunctionApprovalRequestContent[] = [];
    const waiting = request.task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? pendingCallIds(request.task.status.message) : [];
    const input = approvalInput(request.userMessage, waiting);
    // The caller's W3C trace context (traceparent) parents this run's spans, so one trace shows both sides.
    const traced = otel?.propagation.extract(otel.ROOT_CONTEXT, requestHeaders(request), HEADER_GETTER);
    await new Promise<void>((resolve, reject) => {
      const run = this.#agent.runStream(input, { thread, signal });
      const subscribe = () => run.subscribe({
        next: (update) => {
          if (update.role !== undefined && update.role !== 'assistant') return;
          for (const c of update.contents) if (c.kind === 'function-approval-request') approvals.push(c);
          const chunk = toParts(update.contents);
          if (chunk.length === 0) return;
          bus.publish(
            AgentEvent.artifactUpdate({ taskId, contextId, artifact: artifact(artifactId, chunk), append: parts.length > 0, lastChunk: false, metadata: undefined }),
          );
          parts.push(...chunk);
        },
        error: reject,
        complete: resolve,
      });
      if (otel && traced) otel.context.with(traced, subscribe);
      else subscribe();
    });
    const serialized: SerializedThread = await thread.serialize();
    const after = JSON.stringify(serialized);
    // A database-backed thread serializes to the same key every turn: its store already committed the turn.
    if (after !== before) {
      rememberSavingJson(serialized, after); // the in-memory store keeps this text rather than making it again
      await this.#contexts.save(contextId, serialized, stored?.version, stored?.owner ?? '');
    }
    const final =
      approvals.length > 0
        ? status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(approvalRequestParts(approvals), { contextId, taskId }))
        : status(TaskState.TASK_STATE_COMPLETED);
    return { parts: mergeText(parts), artifactId, final: { taskId, contextId, status: final, metadata: undefined } };
  }

  /**
   * A turn of a durable task: the first message starts the run (run id = task id, the context's
   * thread); an answer to its approvals goes to the waiting run. Either way the turn streams from
   * the run's durable stream, after the offset the task's input-required status kept.
   */
  async #runDurableTurn(durable: A2ADurable, request: RequestContext, bus: ExecutionEventBus, signal: AbortSignal): Promise<TurnEnd> {
    const { taskId, contextId } = request;
    const prior = request.task?.status;
    const waiting = prior?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? pendingCallIds(prior.message) : [];
    let after: number | undefined;
    if (waiting.length > 0) {
      const answered = approvalInput(request.userMessage, waiting).contents.filter((c) => c.kind === 'function-approval-response');
      // The run waits for an answer to every call: a message that is no answer rejects them.
      for (const callId of waiting) {
        const answer = answered.find((a) => a.callId === callId);
        await durable.runner.approve(taskId, callId, answer?.approved ?? false, answer ? answer.reason : 'The caller sent a message instead of an answer.');
      }
      after = durableOffsetOf(request.task);
    } else {
      const thread = await this.#threadFor(await this.#contexts.load(contextId));
      await durable.agent.start(approvalInput(request.userMessage, []), { thread, runId: taskId });
    }
    const view = new DurableArtifact();
    const artifactId = durableArtifactId(taskId, after);
    const end = await readDurableTurn(
      durable.runner,
      taskId,
      after,
      view,
      ({ parts, append }) => bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: artifact(artifactId, parts), append, lastChunk: false, metadata: undefined })),
      () => signal.aborted,
    );
    if (!signal.aborted) await saveDurableThread(this.#contexts, contextId, end.thread);
    return { parts: view.parts(), artifactId, final: durableFinalUpdate(view, { taskId, contextId }) };
  }

  async #threadFor(stored: StoredA2AContext | undefined): Promise<AgentThread> {
    if (stored) {
      if (!this.#storeFactory) return this.#agent.deserializeThread(stored.thread);
      return this.#registry.readThread(stored.thread, { messageStoreFactory: this.#storeFactory });
    }
    const fresh = this.#agent.getNewThread();
    if (!this.#storeFactory || !fresh.messageStore) return fresh;
    return new AgentThread({ origin: fresh.origin, messageStore: this.#storeFactory.create(fresh.origin), state: fresh.state });
  }
}

/**
 * What a remote caller may learn of a failure: a category it can act on (retry later, send
 * again), never the error's text, which may name hosts, keys or internals.
 */
function publicFailure(error: unknown): { reason: string; text: string } {
  if (error instanceof RateLimitError) return { reason: 'rate-limited', text: "The agent's model service is rate limiting requests; retry later" };
  if (error instanceof ThreadConflictError) return { reason: 'conflict', text: 'Another turn on this conversation finished first; send this message again' };
  return { reason: 'internal', text: 'The agent could not complete this task' };
}

type Headers = Record<string, string | string[] | undefined>;

function requestHeaders(request: RequestContext): Headers {
  const headers = request.context?.state.get(STATE_HEADERS_KEY);
  return typeof headers === 'object' && headers !== null ? (headers as Headers) : {};
}

const HEADER_GETTER: TextMapGetter<Headers> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

/** How a turn ended: the artifact's whole parts and the final status update. */
interface TurnEnd {
  parts: Part[];
  artifactId: string;
  final: TaskStatusUpdateEvent;
}

function status(state: TaskState, message?: TaskStatus['message']): TaskStatus {
  return { state, message, timestamp: new Date().toISOString() };
}
