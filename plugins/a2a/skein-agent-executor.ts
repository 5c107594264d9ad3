import type { Part, TaskStatus } from '@a2a-js/sdk';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { AgentEvent, TaskState } from './a2a-peers.js';
import { randomUUID } from 'node:crypto';
import {
  type AIAgent,
  AgentThread,
  type ChatMessageStoreFactory,
  type SerializationRegistry,
  type SerializedThread,
  defaultSerializationRegistry,
} from 'skein';
import type { A2AContextStore, StoredA2AContext } from './a2a-context-store.js';
import { agentMessage, artifact, fromA2AMessage, textPart, toParts } from './a2a-mapping.js';

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
}

/**
 * Runs a Skein agent for A2A requests: one AgentThread per A2A `contextId`, read from and saved
 * to the context store around every turn; the reply streams out as one artifact.
 */
export class SkeinAgentExecutor implements AgentExecutor {
  readonly #agent: AIAgent;
  readonly #contexts: A2AContextStore;
  readonly #storeFactory: ChatMessageStoreFactory | undefined;
  readonly #registry: SerializationRegistry;
  readonly #running = new Map<string, { controller: AbortController; contextId: string }>();
  readonly #contextTails = new Map<string, Promise<void>>();

  constructor(options: SkeinAgentExecutorOptions) {
    this.#agent = options.agent;
    this.#contexts = options.contextStore;
    this.#storeFactory = options.chatMessageStoreFactory;
    this.#registry = options.serializationRegistry ?? defaultSerializationRegistry();
  }

  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId } = request;
    const controller = new AbortController();
    this.#running.set(taskId, { controller, contextId });
    try {
      // A stream must open with the task, also when a message continues an existing one.
      bus.publish(
        AgentEvent.task(
          request.task
            ? { ...request.task, status: status(TaskState.TASK_STATE_WORKING) }
            : { id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [request.userMessage], metadata: undefined },
        ),
      );
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }));
      const artifactId = randomUUID();
      const parts = await this.#inContext(contextId, () => this.#runTurn(request, bus, artifactId, controller.signal));
      if (controller.signal.aborted) return;
      if (parts.length > 0) {
        // One consolidated artifact replaces the streamed chunks, so stored tasks stay small.
        bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: artifact(artifactId, parts), append: false, lastChunk: true, metadata: undefined }));
      }
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined }));
    } catch (error) {
      // A cancel already published the canceled state; anything else is this task's failure.
      if (controller.signal.aborted) return;
      const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      const message = agentMessage([textPart(text)], { contextId, taskId });
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_FAILED, message), metadata: undefined }));
    } finally {
      this.#running.delete(taskId);
    }
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const running = this.#running.get(taskId);
    running?.controller.abort();
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

  async #runTurn(request: RequestContext, bus: ExecutionEventBus, artifactId: string, signal: AbortSignal): Promise<Part[]> {
    const { taskId, contextId } = request;
    const stored = await this.#contexts.load(contextId);
    const thread = await this.#threadFor(stored);
    const before = stored ? JSON.stringify(stored.thread) : undefined;
    const parts: Part[] = [];
    await new Promise<void>((resolve, reject) => {
      this.#agent.runStream(fromA2AMessage(request.userMessage), { thread, signal }).subscribe({
        next: (update) => {
          if (update.role !== undefined && update.role !== 'assistant') return;
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
    });
    const serialized: SerializedThread = await thread.serialize();
    // A database-backed thread serializes to the same key every turn: its store already committed the turn.
    if (JSON.stringify(serialized) !== before) await this.#contexts.save(contextId, serialized, stored?.version);
    return mergeText(parts);
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

function status(state: TaskState, message?: TaskStatus['message']): TaskStatus {
  return { state, message, timestamp: new Date().toISOString() };
}

/** Streamed text chunks joined back into one text part (other parts kept in order). */
function mergeText(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (const part of parts) {
    const last = out[out.length - 1];
    if (part.content?.$case === 'text' && last?.content?.$case === 'text') out[out.length - 1] = textPart(last.content.value + part.content.value);
    else out.push(part);
  }
  return out;
}
