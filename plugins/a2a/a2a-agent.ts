import type { AgentCard } from '@a2a-js/sdk';
import type { Client, RequestOptions, TransportFactory } from '@a2a-js/sdk/client';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, TaskState } from './a2a-peers.js';
import type { SendMessageRequest } from '@a2a-js/sdk';
// Observable alone: the rxjs index loads every operator (megabytes of RSS); same class either way.
// The declarations name rxjs's public Observable type; the class comes from its own module.
import type { Observable } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import {
  AbortError,
  ConfigurationError,
  type AgentInput,
  type AgentMiddleware,
  AgentRunResponse,
  type AgentRunOptions,
  type AgentRunResponseUpdate,
  AgentThread,
  AIAgent,
  type ChatMessage,
  ConnectionError,
  ForkUnsupportedError,
  type GetMessagesOptions,
  HistoryUnavailableError,
  pageMessages,
  NotFoundError,
  ServiceError,
  type SerializationRegistry,
  type ThreadConcurrency,
  ThreadCompatibilityError,
  isText,
  linkSignal,
  MiddlewarePipeline,
  throwIfAborted,
  toMessages,
  defaultSerializationRegistry,
} from 'skein';
import {
  A2A_PROVIDER_ID,
  A2AAgentCardError,
  A2AAuthRequiredError,
  A2AProtocolError,
  A2ATaskCanceledError,
  A2ATaskFailedError,
  A2ATaskRejectedError,
  type A2ATaskStateName,
  causeText,
  toSkeinError,
} from './a2a-errors.js';
import { isTerminalState, stateName, toA2AMessage } from './a2a-mapping.js';
import { TaskTracker } from './task-tracker.js';
import { messagesFromTasks } from './a2a-history.js';
import { type A2AAuthMaterial, type A2ACredentials, answerSecurity, describeRequirements } from './a2a-credentials.js';
import { a2aFetch } from './a2a-http.js';
import { grpcTransportFactory, offersHttp, prefersGrpc } from './a2a-grpc-client.js';
import { approvalAnswersAsData, approvalRequestsIn } from './a2a-approvals.js';
import { readOpenTask, setOpenTask } from './a2a-open-task.js';

export { readOpenTask, type A2AOpenTask } from './a2a-open-task.js';

export interface A2AAgentOptions {
  /** The agent card URL (`https://host/.well-known/agent-card.json`, or any `.json` URL), or the agent's base URL. */
  url: string;
  /** Recorded in the threads this agent makes; a thread of another A2A agent is refused. */
  name?: string;
  description?: string;
  /**
   * `fetch` for the card and every call, JSON-RPC, HTTP+JSON and v0.3 alike (auth, proxies,
   * tests). Not used by a custom `clientFactory`'s transports: give those their own `fetchImpl`.
   * gRPC calls do not use it (the card request does); they carry the same credentials, headers
   * and trace context as metadata.
   */
  fetch?: typeof fetch;
  /** HTTP headers sent with every request, the card's included (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /**
   * Authentication: headers of your own per request, and a token function answering the security
   * schemes the remote card requires (bearer, API key, OAuth 2 client credentials via
   * `clientCredentialsToken`, OpenID Connect). See docs/a2a.md.
   */
  credentials?: A2ACredentials;
  /**
   * How `run` follows a task: `stream` (SendStreamingMessage), `poll` (SendMessage returning at
   * once, then GetTask), or `auto` (stream when the card says the agent streams). `runStream`
   * always uses the streaming method.
   */
  mode?: 'auto' | 'stream' | 'poll';
  /** Wait between GetTask polls. Default 250 ms. */
  pollIntervalMs?: number;
  /** What a second run on a busy thread does. Default `queue`. */
  concurrency?: ThreadConcurrency;
  serializationRegistry?: SerializationRegistry;
  /**
   * The SDK client factory (custom transports, interceptors). By default Skein builds one with
   * JSON-RPC and HTTP+JSON transports over `fetch`, and gRPC when the card's preferred interface
   * is gRPC (needs `@grpc/grpc-js` and `@bufbuild/protobuf`), with the v0.3 compatibility layer
   * on, so a remote whose card declares protocol 0.3 is spoken to in 0.3.
   */
  clientFactory?: ClientFactory;
  /**
   * Agent-run middleware wraps each turn (`run`, `runStream`) inside the thread's lock: it may
   * change the input before it is sent, or answer without calling `next` (a short-circuit: no
   * message reaches the remote, and the thread, its context id and any open task, is unchanged).
   * Function-call and chat-client middleware do not apply: the remote agent calls its model
   * and runs its tools itself; nothing of that passes through this process.
   */
  middleware?: Pick<AgentMiddleware, 'agentRun'>;
  /**
   * gRPC (used when the card prefers it): `tls: true` speaks TLS trusting the system's roots,
   * `tls: { ca }` trusts that CA (PEM). Plaintext by default: a card's gRPC address (`host:port`)
   * does not say which.
   */
  grpc?: { tls?: boolean | { ca: string | Buffer } };
}

/** The outcome of one A2A turn: `completed`, or `input-required` (the reply is the remote's question). */
export class A2ARunResponse extends AgentRunResponse {
  constructor(
    messages: ChatMessage[],
    details: ConstructorParameters<typeof AgentRunResponse>[1],
    readonly taskState: Extract<A2ATaskStateName, 'completed' | 'input-required'>,
    readonly taskId: string | undefined,
    readonly contextId: string,
  ) {
    super(messages, details);
  }

  /** True when the remote agent asked a question; the next run on the thread answers it. */
  get inputRequired(): boolean {
    return this.taskState === 'input-required';
  }
}

const DEFAULT_POLL_INTERVAL_MS = 250;
/** How long an abort waits for the remote's task id (to cancel the task) before dropping the connection. */
const ABORT_GRACE_MS = 5000;

/**
 * A remote agent spoken to over A2A (protocol 1.0, `@a2a-js/sdk` 1.x). The remote keeps the
 * conversation: a thread holds the A2A `contextId` as its service thread id, and the open task
 * id while the remote waits for input.
 */
export class A2AAgent extends AIAgent {
  /** The provider id recorded in this agent's threads (and in its telemetry spans). */
  readonly providerId = A2A_PROVIDER_ID;
  readonly name: string | undefined;
  readonly description: string | undefined;
  readonly url: string;
  readonly #options: A2AAgentOptions;
  readonly #registry: SerializationRegistry;
  readonly #middleware: MiddlewarePipeline;
  #connection: Promise<{ client: Client; card: AgentCard }> | undefined;
  #card: AgentCard | undefined;
  readonly #fetch: typeof fetch;

  constructor(options: A2AAgentOptions) {
    super();
    if (!options?.url) throw new TypeError('A2AAgent needs the remote agent card URL, e.g. new A2AAgent({ url: "http://host/.well-known/agent-card.json" }).');
    this.url = options.url;
    this.name = options.name;
    this.description = options.description;
    this.#options = options;
    this.#registry = options.serializationRegistry ?? defaultSerializationRegistry();
    this.#middleware = new MiddlewarePipeline({ agentRun: options.middleware?.agentRun });
    this.#fetch = a2aFetch({
      fetch: options.fetch,
      headers: options.headers,
      credentials: options.credentials,
      auth: () => this.#auth(),
      what: `A2A call to ${options.url}`,
      authHint: () => this.#authHint(),
    });
  }

  /** What the card's security schemes need, asked per request (once the card is known), so tokens can rotate. */
  async #auth(): Promise<A2AAuthMaterial | undefined> {
    return this.#card ? answerSecurity(this.#card, this.#options.credentials) : undefined;
  }

  #authHint(): string | undefined {
    const card = this.#card;
    if (!card || (card.securityRequirements ?? []).length === 0) return undefined;
    return `the remote agent's card requires ${describeRequirements(card)}; answer it through the A2AAgent \`credentials\` option`;
  }

  /** The remote agent card (fetched once; a failed fetch is retried on the next call). */
  async getAgentCard(signal?: AbortSignal): Promise<AgentCard> {
    return (await this.#connect(signal)).card;
  }

  getNewThread(): AgentThread {
    return new AgentThread({ origin: { provider: A2A_PROVIDER_ID, agent: this.name } });
  }

  async deserializeThread(serialized: unknown): Promise<AgentThread> {
    const thread = await this.#registry.readThread(serialized);
    this.assertCompatible(thread);
    readOpenTask(thread.state, '$.state.a2a');
    return thread;
  }

  /**
   * A2A has no call to delete a context: this cancels the thread's open task (if any) and forgets
   * it. The remote keeps (or expires) the conversation by its own rules.
   */
  async deleteThread(thread: AgentThread): Promise<void> {
    this.assertCompatible(thread);
    const open = readOpenTask(thread.state, '$.state.a2a');
    if (open) {
      const { client } = await this.#connect();
      await this.#cancelRemote(client, open.taskId, true);
      setOpenTask(thread, undefined);
    }
  }

  /**
   * The history the remote returns for the thread's context: its tasks (ListTasks, every page)
   * with their history and artifacts, oldest first. A remote that answered with plain messages
   * (no tasks) or keeps no task history has nothing to return: HistoryUnavailableError says so.
   */
  override async getMessages(thread: AgentThread, options: GetMessagesOptions = {}): Promise<ChatMessage[]> {
    this.assertCompatible(thread);
    const contextId = thread.serviceThreadId;
    if (contextId === undefined) return [];
    const { client } = await this.#connect(options.signal);
    const tasks = [];
    try {
      let pageToken = '';
      do {
        const page = await client.listTasks(
          { tenant: '', contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 100, pageToken, statusTimestampAfter: undefined, includeArtifacts: true },
          { signal: options.signal, serviceParameters: this.#options.headers },
        );
        tasks.push(...page.tasks);
        pageToken = page.nextPageToken;
      } while (pageToken);
    } catch (error) {
      throw new HistoryUnavailableError(A2A_PROVIDER_ID, `The remote A2A agent did not list the tasks of context "${contextId}" (${causeText(error)}), so its history cannot be read.`, {
        cause: error,
      });
    }
    if (tasks.length === 0) {
      throw new HistoryUnavailableError(
        A2A_PROVIDER_ID,
        `The remote A2A agent returned no task history for context "${contextId}": it answered with messages only (no tasks), or keeps no history. The remote owns this conversation; keep your own copy of the replies if you need them.`,
      );
    }
    return pageMessages(messagesFromTasks(tasks), options);
  }

  /** Always ForkUnsupportedError: the remote owns the context, and A2A has no call to copy one. */
  override async forkThread(thread: AgentThread): Promise<AgentThread> {
    this.assertCompatible(thread);
    throw new ForkUnsupportedError(
      A2A_PROVIDER_ID,
      `A2A threads cannot be forked: the remote agent owns context "${thread.serviceThreadId ?? '(not started)'}" and A2A has no call to copy one. Start a new thread with agent.getNewThread() and send what the branch needs.`,
    );
  }

  run(input: AgentInput, options: AgentRunOptions = {}): Promise<AgentRunResponse> {
    return this.#runTurn(input, options, options.signal ?? new AbortController().signal, undefined);
  }

  runStream(input: AgentInput, options: AgentRunOptions = {}): Observable<AgentRunResponseUpdate> {
    return new RxObservable<AgentRunResponseUpdate>((subscriber) => {
      const controller = new AbortController();
      const unlink = linkSignal(options.signal, controller);
      const emit = (update: AgentRunResponseUpdate) => {
        if (!subscriber.closed) subscriber.next(update);
      };
      this.#runTurn(input, options, controller.signal, emit).then(
        () => subscriber.complete(),
        (error: unknown) => {
          if (!subscriber.closed) subscriber.error(error);
        },
      );
      return () => {
        unlink();
        controller.abort(new AbortError('The stream was unsubscribed; the remote task was canceled and the thread is unchanged.'));
      };
    });
  }

  /** Throws ThreadCompatibilityError when `thread` is not an A2A thread of this agent. */
  assertCompatible(thread: AgentThread): void {
    const made = `made by ${thread.origin.provider}${thread.origin.agent ? ` (agent "${thread.origin.agent}")` : ''}`;
    if (thread.origin.provider !== A2A_PROVIDER_ID) {
      throw new ThreadCompatibilityError(
        `Expected an A2A thread (provider "${A2A_PROVIDER_ID}"), found a thread ${made}. Continue it with an agent on ${thread.origin.provider}, or start a new thread with agent.getNewThread().`,
      );
    }
    if (thread.origin.agent !== undefined && this.name !== undefined && thread.origin.agent !== this.name) {
      throw new ThreadCompatibilityError(
        `Expected a thread of A2A agent "${this.name}", found a thread ${made}; its context id means nothing to this remote. Continue it with agent "${thread.origin.agent}", or start a new thread.`,
      );
    }
    if (thread.messageStore !== undefined) {
      throw new ThreadCompatibilityError(
        `An A2A remote keeps the conversation itself, but this thread holds a "${thread.messageStore.type}" message store. Start a new thread with agent.getNewThread().`,
      );
    }
  }

  async #runTurn(
    input: AgentInput,
    options: AgentRunOptions,
    signal: AbortSignal,
    onUpdate: ((update: AgentRunResponseUpdate) => void) | undefined,
  ): Promise<AgentRunResponse> {
    const thread = options.thread ?? this.getNewThread();
    this.assertCompatible(thread);
    const messages = toMessages(input);
    const release = await thread.acquire(options.concurrency ?? this.#options.concurrency ?? 'queue');
    try {
      const context = { agent: this, thread, messages, options, streaming: onUpdate !== undefined };
      const { response } = await this.#middleware.runAgent(context, (turnInput) => this.#exchange(thread, turnInput, signal, onUpdate), onUpdate);
      return response;
    } catch (error) {
      // A middleware's own error passes as it is, unless the caller aborted.
      if (signal.aborted && !(error instanceof AbortError)) throw new AbortError(undefined, { cause: error });
      throw error;
    } finally {
      release();
    }
  }

  /** Sends the turn's input and follows the remote's answer; the thread changes only when it succeeds. */
  async #exchange(
    thread: AgentThread,
    input: ChatMessage[],
    signal: AbortSignal,
    onUpdate: ((update: AgentRunResponseUpdate) => void) | undefined,
  ): Promise<A2ARunResponse> {
    try {
      throwIfAborted(signal);
      const open = readOpenTask(thread.state, 'thread.state.a2a');
      // Built first: input A2A cannot carry is refused before any request (the card's included).
      const message = toA2AMessage(approvalAnswersAsData(input), { contextId: thread.serviceThreadId, taskId: open?.taskId });
      const { client, card } = await this.#connect(signal);
      const authorName = this.name ?? card.name;
      const tracker = new TaskTracker(open, onUpdate && ((contents) => onUpdate(toUpdate(contents, authorName))));
      const request: SendMessageRequest = { tenant: '', message, configuration: undefined, metadata: undefined };
      const mode = this.#options.mode ?? 'auto';
      const stream = onUpdate !== undefined || mode === 'stream' || (mode === 'auto' && card.capabilities?.streaming === true);
      await this.#follow(client, request, tracker, stream, signal);
      return this.#finish(thread, tracker, authorName);
    } catch (error) {
      throw toSkeinError(error, signal, `A2A call to ${this.url}`);
    }
  }

  /**
   * Sends the message and follows its task until the remote stops. The caller's abort cancels
   * the remote task: if it comes before the task id is known, the exchange goes on (for at most
   * `ABORT_GRACE_MS`) until the id arrives, so the task is not left running unseen.
   */
  async #follow(client: Client, request: SendMessageRequest, tracker: TaskTracker, stream: boolean, signal: AbortSignal): Promise<void> {
    const controller = new AbortController();
    let grace: ReturnType<typeof setTimeout> | undefined;
    const stop = () => controller.abort(signal.reason);
    const onAbort = () => {
      if (tracker.taskId !== undefined || tracker.done) stop();
      else grace = setTimeout(stop, ABORT_GRACE_MS);
    };
    if (signal.aborted) throw new AbortError(undefined, { cause: signal.reason });
    signal.addEventListener('abort', onAbort, { once: true });
    const call: RequestOptions = { signal: controller.signal, serviceParameters: this.#customHeaders() };
    try {
      if (stream) {
        for await (const event of client.sendMessageStream(request, call)) {
          tracker.applyEvent(event);
          if (tracker.done || (signal.aborted && tracker.taskId !== undefined)) break;
        }
      } else {
        const config = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };
        tracker.applyResult(await client.sendMessage({ ...request, configuration: config }, call));
      }
      // A stream that closed early, or a task that returned at once: poll until the remote stops.
      while (!tracker.done && !signal.aborted) {
        if (tracker.taskId === undefined) throw new A2AProtocolError('The remote agent ended the exchange without a message or a task.');
        await sleep(this.#options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, controller.signal);
        tracker.applyTask(await client.getTask({ tenant: '', id: tracker.taskId, historyLength: 0 }, call));
      }
      if (signal.aborted) throw new AbortError(undefined, { cause: signal.reason });
    } catch (error) {
      if (signal.aborted && tracker.taskId !== undefined && !isTerminalState(tracker.state)) {
        await this.#cancelRemote(client, tracker.taskId);
      }
      throw error;
    } finally {
      clearTimeout(grace);
      signal.removeEventListener('abort', onAbort);
      // Ends an event stream the remote keeps open (e.g. after auth-required) without canceling the task.
      controller.abort();
    }
  }

  /**
   * Best effort after an abort (the abort is what the caller hears about). With `strict`
   * (deleteThread) an HTTP or connection failure is thrown, typed; a task that already ended or
   * that the remote no longer knows is simply gone.
   */
  async #cancelRemote(client: Client, taskId: string, strict = false): Promise<void> {
    try {
      await client.cancelTask({ tenant: '', id: taskId, metadata: undefined }, { serviceParameters: this.#customHeaders() });
    } catch (error) {
      if (!strict) return;
      const typed = toSkeinError(error, undefined, `A2A cancel of task ${taskId} at ${this.url}`);
      if (typed instanceof NotFoundError && typed.status === undefined) return;
      if (/TaskNotCancelable/.test(typed.message)) return;
      throw typed;
    }
  }

  #finish(thread: AgentThread, tracker: TaskTracker, authorName: string | undefined): A2ARunResponse {
    const contextId = tracker.contextId;
    if (!contextId) throw new A2AProtocolError('The remote agent answered without a contextId; A2A needs one to continue the conversation.');
    if (thread.serviceThreadId !== undefined && thread.serviceThreadId !== contextId) {
      throw new A2AProtocolError(
        `The remote agent answered in context "${contextId}", but the thread is context "${thread.serviceThreadId}": the remote lost the conversation. Start a new thread.`,
      );
    }
    const taskId = tracker.taskId;
    const state = tracker.message ? TaskState.TASK_STATE_COMPLETED : tracker.state;
    const details = { taskId: taskId ?? '', contextId, statusText: tracker.statusText() };
    const why = details.statusText ? `: ${details.statusText}` : '.';
    switch (state) {
      case TaskState.TASK_STATE_COMPLETED:
      case TaskState.TASK_STATE_INPUT_REQUIRED:
        break;
      case TaskState.TASK_STATE_FAILED:
        throw new A2ATaskFailedError(`The remote A2A agent failed task ${taskId}${why}`, { ...details, state: 'failed' });
      case TaskState.TASK_STATE_REJECTED:
        throw new A2ATaskRejectedError(`The remote A2A agent rejected task ${taskId}${why}`, { ...details, state: 'rejected' });
      case TaskState.TASK_STATE_CANCELED:
        throw new A2ATaskCanceledError(`The remote A2A agent canceled task ${taskId}${why}`, { ...details, state: 'canceled' });
      case TaskState.TASK_STATE_AUTH_REQUIRED:
        throw new A2AAuthRequiredError(
          `The remote A2A agent needs credentials for task ${taskId}${why} Provide them as the remote agent documents, then continue.`,
          details,
        );
      default:
        throw new A2AProtocolError(`The remote A2A agent left task ${taskId} in state "${stateName(state)}".`);
    }
    const reply: ChatMessage = { role: 'assistant', contents: tracker.contents(), createdAt: new Date().toISOString() };
    if (authorName !== undefined) reply.authorName = authorName;
    const messageId = tracker.message?.messageId ?? taskId;
    if (messageId) reply.messageId = messageId;
    reply.additionalProperties = { a2a: { contextId, ...(taskId ? { taskId } : {}), state: stateName(state) } };
    // The turn lands only now: a failed or aborted run leaves the thread as it was.
    if (thread.serviceThreadId === undefined) thread.setServiceThreadId(contextId);
    const inputRequired = state === TaskState.TASK_STATE_INPUT_REQUIRED && taskId !== undefined;
    setOpenTask(thread, inputRequired ? { taskId, artifactIds: tracker.artifactIds(), status: tracker.statusMarker() } : undefined);
    // A remote Skein server asking approval: the calls, as a local ChatAgent's response has them.
    const approvalRequests = inputRequired ? approvalRequestsIn(reply.contents) : [];
    return new A2ARunResponse(
      [reply],
      { responseId: messageId, conversationId: contextId, agentName: authorName, ...(approvalRequests.length > 0 ? { approvalRequests } : {}) },
      inputRequired ? 'input-required' : 'completed',
      taskId,
      contextId,
    );
  }

  #connect(signal?: AbortSignal): Promise<{ client: Client; card: AgentCard }> {
    this.#connection ??= this.#createClient(signal).catch((error: unknown) => {
      this.#connection = undefined;
      throw error;
    });
    return this.#connection;
  }

  async #createClient(signal?: AbortSignal): Promise<{ client: Client; card: AgentCard }> {
    const { base, path } = cardLocation(this.url);
    const cardFetch: typeof fetch = (input, init) => this.#fetch(input, { ...init, signal });
    let card: AgentCard;
    try {
      card = await new DefaultAgentCardResolver({ fetchImpl: cardFetch, legacyCompat: { enabled: true } }).resolve(base, path);
    } catch (error) {
      if (signal?.aborted) throw new AbortError(undefined, { cause: error });
      if (error instanceof NotFoundError) {
        throw new A2AAgentCardError(this.url, `No A2A agent card at ${this.url} (HTTP 404). Check the URL: it should be the agent card URL or the agent's base URL.`, {
          status: 404,
          cause: error,
        });
      }
      if (error instanceof ServiceError) throw error;
      if (error instanceof SyntaxError) {
        throw new A2AAgentCardError(this.url, `${this.url} did not answer with an A2A agent card (not JSON: ${error.message}).`, { cause: error });
      }
      throw new ConnectionError(A2A_PROVIDER_ID, `Could not fetch the A2A agent card at ${this.url}: ${causeText(error)}`, { cause: error });
    }
    if (typeof card?.name !== 'string' || !Array.isArray(card.supportedInterfaces)) {
      throw new A2AAgentCardError(this.url, `${this.url} answered JSON that is not an A2A agent card (it needs "name" and "supportedInterfaces", or a 0.3 card's "url").`);
    }
    this.#card = card;
    // Outside the try: a gRPC-only card without the gRPC peers installed is their ConfigurationError.
    const factory = this.#clientFactory(card);
    try {
      return { client: await factory.createFromAgentCard(card), card };
    } catch (error) {
      throw new A2AAgentCardError(this.url, `The A2A agent card at ${this.url} offers no transport this client speaks: ${causeText(error)}`, { cause: error });
    }
  }

  /** A custom clientFactory's transports do not use Skein's fetch: `headers` then go as the SDK's service parameters. */
  #customHeaders(): Record<string, string> | undefined {
    return this.#options.clientFactory ? this.#options.headers : undefined;
  }

  #clientFactory(card: AgentCard): ClientFactory {
    if (this.#options.clientFactory) return this.#options.clientFactory;
    const transport = { fetchImpl: this.#fetch, legacyCompat: { enabled: true } };
    const transports: TransportFactory[] = [new JsonRpcTransportFactory(transport), new RestTransportFactory(transport)];
    const grpc = prefersGrpc(card) ? this.#grpcTransport(card) : undefined;
    if (grpc) transports.push(grpc);
    return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports }));
  }

  /**
   * gRPC, loaded only for a card that prefers it. Without its peers installed, a card that offers
   * JSON-RPC or HTTP+JSON too is spoken to over those; a gRPC-only card is their ConfigurationError.
   */
  #grpcTransport(card: AgentCard): TransportFactory | undefined {
    const options = this.#options;
    try {
      return grpcTransportFactory({
        request: { auth: () => this.#auth(), headers: options.headers, credentials: options.credentials },
        what: `A2A call to ${this.url}`,
        authHint: () => this.#authHint(),
        tls: options.grpc?.tls,
      });
    } catch (error) {
      if (error instanceof ConfigurationError && offersHttp(card)) return undefined;
      throw error;
    }
  }
}

function toUpdate(contents: AgentRunResponseUpdate['contents'], authorName: string | undefined): AgentRunResponseUpdate {
  let text = '';
  for (const c of contents) if (isText(c)) text += c.text;
  const update: AgentRunResponseUpdate = { text, contents, role: 'assistant' };
  if (authorName !== undefined) update.authorName = authorName;
  return update;
}

/** `.../agent-card.json` (any `.json`) is the card itself; anything else is the agent's base URL. */
function cardLocation(url: string): { base: string; path: string | undefined } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new A2AAgentCardError(url, `"${url}" is not a URL; give the remote agent card URL, e.g. http://host/.well-known/agent-card.json.`, { cause: error });
  }
  if (parsed.pathname.endsWith('.json')) return { base: parsed.href, path: '' };
  // A base URL with a path is a directory: the card is under it, not beside it.
  if (!parsed.pathname.endsWith('/')) parsed.pathname += '/';
  return { base: parsed.href, path: undefined };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new AbortError(undefined, { cause: signal.reason }));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortError(undefined, { cause: signal.reason }));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

