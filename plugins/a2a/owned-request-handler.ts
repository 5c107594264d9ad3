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
import { RequestMalformedError, TaskNotFoundError } from './a2a-peers.js';
import type { A2ARequestHandler, ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { A2AContextStore } from './a2a-context-store.js';
import { ownerOf } from './skein-agent-executor.js';

/**
 * The SDK request handler with ownership: a context belongs to the user who started it, and a
 * task to its context's owner. Anyone else is told the task does not exist (the same answer as
 * for an unknown id, so ids cannot be probed), never shown its history.
 */
export class OwnedRequestHandler implements A2ARequestHandler {
  constructor(
    private readonly inner: A2ARequestHandler,
    private readonly contexts: A2AContextStore,
    private readonly tasks: TaskStore,
    /** Which push-notification webhook URLs a caller may register (the server will POST to them); unset when push is off. */
    private readonly webhookAllowed?: (url: URL) => boolean,
  ) {}

  getAgentCard(): Promise<AgentCard> {
    return this.inner.getAgentCard();
  }

  getAuthenticatedExtendedAgentCard(params: GetExtendedAgentCardRequest, context: ServerCallContext): Promise<AgentCard> {
    return this.inner.getAuthenticatedExtendedAgentCard(params, context);
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    await this.#checkMessage(params, context);
    return this.inner.sendMessage(params, context);
  }

  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    await this.#checkMessage(params, context);
    yield* this.inner.sendMessageStream(params, context);
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    await this.#checkTask(params.id, context);
    return this.inner.getTask(params, context);
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    await this.#checkTask(params.id, context);
    return this.inner.cancelTask(params, context);
  }

  async createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    await this.#checkTask(params.taskId, context);
    this.#checkWebhook(params);
    return this.inner.createTaskPushNotificationConfig(params, context);
  }

  async getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    await this.#checkTask(params.taskId, context);
    return this.inner.getTaskPushNotificationConfig(params, context);
  }

  async listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext): Promise<ListTaskPushNotificationConfigsResponse> {
    await this.#checkTask(params.taskId, context);
    return this.inner.listTaskPushNotificationConfigs(params, context);
  }

  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    await this.#checkTask(params.taskId, context);
    return this.inner.deleteTaskPushNotificationConfig(params, context);
  }

  async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    await this.#checkTask(params.id, context);
    yield* this.inner.resubscribe(params, context);
  }

  /** Lists only the caller's tasks (a page may then hold fewer than asked). */
  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const page = await this.inner.listTasks(params, context);
    const owner = ownerOf(context.user);
    const mine: Task[] = [];
    for (const task of page.tasks) if ((await this.contexts.load(task.contextId))?.owner === owner) mine.push(task);
    return { ...page, tasks: mine };
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
