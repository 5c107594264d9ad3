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
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import type { RequestOptions, Transport, TransportFactory } from '@a2a-js/sdk/client';
import { AuthenticationError, ConnectionError, NotFoundError, RateLimitError, ServiceError } from 'skein';
import { A2A_PROVIDER_ID } from './a2a-errors.js';
import { a2aRequestHeaders } from './a2a-http.js';
import { grpcPeers } from './grpc-peers.js';

const HTTP_BINDINGS = new Set(['JSONRPC', 'HTTP+JSON']);

/**
 * True when the card's preferred interface (the first one in card order with a binding Skein
 * speaks) is gRPC: the SDK's ClientFactory picks by card order, so only then is the gRPC
 * transport needed (and its peers loaded).
 */
export function prefersGrpc(card: AgentCard): boolean {
  for (const { protocolBinding } of card.supportedInterfaces ?? []) {
    const binding = protocolBinding.toUpperCase();
    if (binding === 'GRPC') return true;
    if (HTTP_BINDINGS.has(binding)) return false;
  }
  return false;
}

/** True when the card offers a JSON-RPC or HTTP+JSON interface too. */
export function offersHttp(card: AgentCard): boolean {
  return (card.supportedInterfaces ?? []).some((i) => HTTP_BINDINGS.has(i.protocolBinding.toUpperCase()));
}

export interface GrpcClientOptions {
  /** What every call carries, as the HTTP requests do (see `a2aRequestHeaders`). */
  request: Parameters<typeof a2aRequestHeaders>[0];
  /** Names the call in error messages, e.g. `A2A call to http://host/...`. */
  what: string;
  /** Finishes the message of UNAUTHENTICATED / PERMISSION_DENIED (which schemes the card asks for). */
  authHint: () => string | undefined;
  /** TLS: `true` trusts the system's roots; `ca` (PEM) trusts that CA instead. Plaintext when unset. */
  tls?: boolean | { ca: string | Buffer };
}

/**
 * The SDK's gRPC transport (1.0, or 0.3 for a 0.3 interface), each call with Skein's metadata and
 * its gRPC status turned into Skein's typed error, as HTTP statuses are (see `grpcStatusError`).
 */
export function grpcTransportFactory(options: GrpcClientOptions): TransportFactory {
  const { grpc, client } = grpcPeers();
  const { tls } = options;
  const grpcChannelCredentials = tls ? grpc.credentials.createSsl(typeof tls === 'object' ? Buffer.from(tls.ca) : null) : undefined;
  const inner = new client.GrpcTransportFactory({ grpcChannelCredentials, legacyCompat: { enabled: true } });
  return {
    get protocolName() {
      return inner.protocolName;
    },
    create: async (url, card) => new SkeinGrpcTransport(await inner.create(url, card), url, options),
  };
}

class SkeinGrpcTransport implements Transport {
  constructor(
    private readonly inner: Transport,
    private readonly endpoint: string,
    private readonly options: GrpcClientOptions,
  ) {}

  get protocolName(): string {
    return this.inner.protocolName;
  }

  get protocolVersion(): string {
    return this.inner.protocolVersion;
  }

  getExtendedAgentCard(params: GetExtendedAgentCardRequest, options?: RequestOptions): Promise<AgentCard> {
    return this.#unary(options, (o) => this.inner.getExtendedAgentCard(params, o));
  }

  sendMessage(params: SendMessageRequest, options?: RequestOptions): ReturnType<Transport['sendMessage']> {
    return this.#unary(options, (o) => this.inner.sendMessage(params, o));
  }

  sendMessageStream(params: SendMessageRequest, options?: RequestOptions): AsyncGenerator<StreamResponse, void, undefined> {
    return this.#stream(options, (o) => this.inner.sendMessageStream(params, o));
  }

  createTaskPushNotificationConfig(params: TaskPushNotificationConfig, options?: RequestOptions): Promise<TaskPushNotificationConfig> {
    return this.#unary(options, (o) => this.inner.createTaskPushNotificationConfig(params, o));
  }

  getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, options?: RequestOptions): Promise<TaskPushNotificationConfig> {
    return this.#unary(options, (o) => this.inner.getTaskPushNotificationConfig(params, o));
  }

  listTaskPushNotificationConfig(params: ListTaskPushNotificationConfigsRequest, options?: RequestOptions): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.#unary(options, (o) => this.inner.listTaskPushNotificationConfig(params, o));
  }

  deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, options?: RequestOptions): Promise<void> {
    return this.#unary(options, (o) => this.inner.deleteTaskPushNotificationConfig(params, o));
  }

  getTask(params: GetTaskRequest, options?: RequestOptions): Promise<Task> {
    return this.#unary(options, (o) => this.inner.getTask(params, o));
  }

  cancelTask(params: CancelTaskRequest, options?: RequestOptions): Promise<Task> {
    return this.#unary(options, (o) => this.inner.cancelTask(params, o));
  }

  listTasks(params: ListTasksRequest, options?: RequestOptions): Promise<ListTasksResponse> {
    return this.#unary(options, (o) => this.inner.listTasks(params, o));
  }

  resubscribeTask(params: SubscribeToTaskRequest, options?: RequestOptions): AsyncGenerator<StreamResponse, void, undefined> {
    return this.#stream(options, (o) => this.inner.resubscribeTask(params, o));
  }

  async #unary<T>(options: RequestOptions | undefined, call: (options: RequestOptions) => Promise<T>): Promise<T> {
    const withMetadata = await this.#withMetadata(options);
    try {
      return await call(withMetadata);
    } catch (error) {
      throw this.#typed(error, options);
    }
  }

  async *#stream<T>(options: RequestOptions | undefined, call: (options: RequestOptions) => AsyncGenerator<T, void, undefined>): AsyncGenerator<T, void, undefined> {
    const withMetadata = await this.#withMetadata(options);
    try {
      yield* call(withMetadata);
    } catch (error) {
      throw this.#typed(error, options);
    }
  }

  /** The credentials, headers and trace context as metadata (lower-case names); a query API key goes as metadata too. */
  async #withMetadata(options: RequestOptions | undefined): Promise<RequestOptions> {
    const { headers, query } = await a2aRequestHeaders(this.options.request, this.endpoint, new Headers(), false);
    const metadata: Record<string, string> = {};
    headers.forEach((value, name) => (metadata[name] = value));
    for (const [name, value] of Object.entries(query)) metadata[name.toLowerCase()] = value;
    return { ...options, serviceParameters: { ...options?.serviceParameters, ...metadata } };
  }

  /** The caller's abort stays as it is (the agent makes it an AbortError). */
  #typed(error: unknown, options: RequestOptions | undefined): unknown {
    if (options?.signal?.aborted) return error;
    return grpcStatusError(error, `${this.options.what} (gRPC ${this.endpoint})`, this.options.authHint) ?? error;
  }
}

const STATUS_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/**
 * A gRPC failure as Skein's typed error, by its status code, the way HTTP statuses are mapped:
 * UNAUTHENTICATED / PERMISSION_DENIED AuthenticationError, RESOURCE_EXHAUSTED RateLimitError,
 * NOT_FOUND NotFoundError (A2A's task not found), UNAVAILABLE / DEADLINE_EXCEEDED
 * ConnectionError, any other ServiceError. The message names the status and the A2A error; the
 * SDK's error (with its `status` code) is the `cause`. Not a gRPC failure: `undefined`.
 */
export function grpcStatusError(error: unknown, what: string, authHint: () => string | undefined): ServiceError | undefined {
  const status = grpcStatusOf(error);
  if (!status) return undefined;
  const codeName = STATUS_NAMES[status.code] ?? `status ${status.code}`;
  const a2aName = status.name && status.name !== 'A2AError' && status.name !== 'Error' ? ` (${status.name})` : '';
  const text = `${what} failed with gRPC ${codeName}${a2aName}${status.details ? `: ${status.details}` : ''}`;
  const details = { cause: error };
  switch (codeName) {
    case 'UNAUTHENTICATED':
    case 'PERMISSION_DENIED':
      return new AuthenticationError(
        A2A_PROVIDER_ID,
        `${text} (${authHint() ?? "give the remote agent's credentials through the A2AAgent `credentials` or `headers` option (sent as gRPC metadata)"}).`,
        details,
      );
    case 'RESOURCE_EXHAUSTED':
      return new RateLimitError(A2A_PROVIDER_ID, `${text} (the remote agent is rate limiting this client; retry later or slow down).`, details);
    case 'NOT_FOUND':
      return new NotFoundError(A2A_PROVIDER_ID, text, details);
    case 'UNAVAILABLE':
    case 'DEADLINE_EXCEEDED':
      return new ConnectionError(A2A_PROVIDER_ID, `${text} (is the gRPC address in the card reachable from here?)`, details);
    default:
      return new ServiceError(A2A_PROVIDER_ID, text, details);
  }
}

/** The SDK's gRPC A2AError (`transport: 'grpc'`, `status`), or grpc-js's own error (`code`, `details`), or one as a cause. */
function grpcStatusOf(error: unknown): { code: number; name: string; details: string } | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth++) {
    const { transport, status, code, details, cause } = e as { transport?: unknown; status?: unknown; code?: unknown; details?: unknown; cause?: unknown };
    if (transport === 'grpc' && typeof status === 'number') {
      // The SDK's generic error says "gRPC error for <method>: <code> <details>"; the grpc-js cause has the details alone.
      const raw = (cause as { details?: unknown } | undefined)?.details;
      return { code: status, name: e.name, details: typeof raw === 'string' ? raw : e.message };
    }
    if (typeof code === 'number' && typeof details === 'string') return { code, name: '', details };
  }
  return undefined;
}
