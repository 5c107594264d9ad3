import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';
import { A2AError, RequestMalformedError, TaskNotFoundError } from './a2a-peers.js';
import type { A2ARequestHandler, ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { A2AContextStore } from './a2a-context-store.js';
import type { DurableTaskFollower } from './a2a-durable.js';
import { type A2AServerLogger, defaultA2AServerLogger, ownerOf } from './skein-agent-executor.js';

/**
 * The SDK request handler with ownership: a context belongs to the user who started it, and a
 * task to its context's owner. Anyone else is told the task does not exist (the same answer as
 * for an unknown id, so ids cannot be probed), never shown its history.
 *
 * Remote callers see A2A errors as they are; any other failure (a store that cannot be reached,
 * a bug) is logged with an error id and answered as an internal error naming only that id, so
 * hosts, queries and keys in the error never leave the server.
 */
export class OwnedRequestHandler implements A2ARequestHandler {
  constructor(
    private readonly inner: A2ARequestHandler,
    private readonly contexts: A2AContextStore,
    private readonly tasks: TaskStore,
    /** Which push-notification webhook URLs a caller may register (the server will POST to them); unset when push is off. */
    private readonly webhookAllowed?: (url: URL) => boolean,
    private readonly logger?: A2AServerLogger,
    /** With a durable agent: finishes tasks whose run goes on without an executor here. */
    private readonly follower?: DurableTaskFollower,
  ) {}

  getAgentCard(): Promise<AgentCard> {
    return this.inner.getAgentCard();
  }

  getAuthenticatedExtendedAgentCard(params: GetExtendedAgentCardRequest, context: ServerCallContext): Promise<AgentCard> {
    return this.inner.getAuthenticatedExtendedAgentCard(params, context);
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return this.#screened('SendMessage', async () => {
      await this.#checkMessage(params, context);
      return this.inner.sendMessage(params, context);
    });
  }

  sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    return this.#screenedStream('SendStreamingMessage', async function* (this: OwnedRequestHandler) {
      await this.#checkMessage(params, context);
      yield* this.inner.sendMessageStream(params, context);
    });
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.#forOwnTask('GetTask', params.id, context, async () => {
      const task = this.follower ? await this.tasks.load(params.id, context) : undefined;
      if (this.follower?.detached(task)) this.follower.follow(task, context);
      return this.inner.getTask(params, context);
    });
  }

  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.#forOwnTask('CancelTask', params.id, context, () => this.inner.cancelTask(params, context));
  }

  createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return this.#screened('CreateTaskPushNotificationConfig', async () => {
      await this.#checkTask(params.taskId, context);
      this.#checkWebhook(params);
      return this.inner.createTaskPushNotificationConfig(params, context);
    });
  }

  getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    return this.#forOwnTask('GetTaskPushNotificationConfig', params.taskId, context, () => this.inner.getTaskPushNotificationConfig(params, context));
  }

  listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.#forOwnTask('ListTaskPushNotificationConfigs', params.taskId, context, () => this.inner.listTaskPushNotificationConfigs(params, context));
  }

  deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    return this.#forOwnTask('DeleteTaskPushNotificationConfig', params.taskId, context, () => this.inner.deleteTaskPushNotificationConfig(params, context));
  }

  resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    return this.#screenedStream('SubscribeToTask', async function* (this: OwnedRequestHandler) {
      await this.#checkTask(params.id, context);
      const task = this.follower ? await this.tasks.load(params.id, context) : undefined;
      if (this.follower?.detached(task)) yield* this.follower.resubscribe(task, context);
      else yield* this.inner.resubscribe(params, context);
    });
  }

  /** Lists only the caller's tasks (a page may then hold fewer than asked). */
  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.#screened('ListTasks', async () => {
      const page = await this.inner.listTasks(params, context);
      const owner = ownerOf(context.user);
      const mine: Task[] = [];
      for (const task of page.tasks) if ((await this.contexts.load(task.contextId))?.owner === owner) mine.push(task);
      return { ...page, tasks: mine };
    });
  }

  /** A call about one task: only its context's owner gets through. */
  #forOwnTask<T>(operation: string, taskId: string, context: ServerCallContext, call: () => Promise<T>): Promise<T> {
    return this.#screened(operation, async () => {
      await this.#checkTask(taskId, context);
      return call();
    });
  }

  async #screened<T>(operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw this.#screen(operation, error);
    }
  }

  async *#screenedStream(operation: string, stream: (this: OwnedRequestHandler) => AsyncGenerator<StreamResponse, void, undefined>): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      yield* stream.call(this);
    } catch (error) {
      throw this.#screen(operation, error);
    }
  }

  /** What a remote caller may see of a failure. */
  #screen(operation: string, error: unknown): unknown {
    if (error instanceof A2AError) return error;
    const errorId = randomUUID();
    (this.logger ?? defaultA2AServerLogger).error(`A2A ${operation} failed; error id ${errorId}:`, error);
    return new Error(`The server could not complete this request (error id ${errorId}).`);
  }

  #checkWebhook(config: TaskPushNotificationConfig | undefined): void {
    if (!config?.url || !this.webhookAllowed) return;
    let url: URL | undefined;
    try {
      url = new URL(config.url);
    } catch {
      url = undefined;
    }
    if (!url || !this.webhookAllowed(url)) {
      throw new RequestMalformedError(`Push notification URL ${JSON.stringify(config.url)} is not allowed by this server (https URLs only, unless the server allows more).`);
    }
  }

  async #checkMessage(params: SendMessageRequest, context: ServerCallContext): Promise<void> {
    this.#checkWebhook(params.configuration?.taskPushNotificationConfig);
    const { contextId, taskId } = params.message ?? {};
    if (taskId) await this.#checkTask(taskId, context);
    if (contextId) {
      const stored = await this.contexts.load(contextId);
      // An unknown context id is a new conversation, owned by whoever starts it.
      if (stored && stored.owner !== ownerOf(context.user)) throw new TaskNotFoundError(`Context ${contextId} not found.`);
    }
  }

  async #checkTask(taskId: string, context: ServerCallContext): Promise<void> {
    const task = await this.tasks.load(taskId, context);
    if (!task) return; // the SDK answers not-found itself
    const stored = await this.contexts.load(task.contextId);
    if (!stored || stored.owner !== ownerOf(context.user)) throw new TaskNotFoundError(`Task ${taskId} not found.`);
  }
}
