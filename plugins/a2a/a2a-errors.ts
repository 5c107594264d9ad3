import {
  AbortError,
  AuthenticationError,
  ConnectionError,
  NotFoundError,
  registerErrorClass,
  ServiceError,
  SkeinError,
} from 'skein';

export const A2A_PROVIDER_ID = 'a2a';

/** The A2A task states Skein reports, in the protocol's own words (lower-case, kebab). */
export type A2ATaskStateName =
  | 'submitted'
  | 'working'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'input-required'
  | 'rejected'
  | 'auth-required'
  | 'unknown';

export interface A2ATaskErrorDetails {
  taskId: string;
  contextId: string;
  state: A2ATaskStateName;
  /** The text of the remote agent's status message, when it sent one. */
  statusText?: string;
  cause?: unknown;
}

/** A remote A2A task ended in a state that is not a result (failed, rejected, canceled). */
export class A2ATaskError extends ServiceError {
  readonly taskId: string;
  readonly contextId: string;
  readonly state: A2ATaskStateName;
  readonly statusText: string | undefined;
  constructor(message: string, details: A2ATaskErrorDetails) {
    super(A2A_PROVIDER_ID, message, { cause: details.cause });
    this.taskId = details.taskId;
    this.contextId = details.contextId;
    this.state = details.state;
    this.statusText = details.statusText;
  }
}

/** The remote agent tried and failed (`failed`). The thread is unchanged. */
export class A2ATaskFailedError extends A2ATaskError {}
/** The remote agent declined the task (`rejected`). The thread is unchanged. */
export class A2ATaskRejectedError extends A2ATaskError {}
/** The remote side canceled the task (not this client's abort, which is an AbortError). */
export class A2ATaskCanceledError extends A2ATaskError {}

/**
 * The remote task waits for credentials given out of band (`auth-required`). The task stays open
 * on the remote; the thread is unchanged.
 */
export class A2AAuthRequiredError extends AuthenticationError {
  readonly taskId: string;
  readonly contextId: string;
  readonly statusText: string | undefined;
  constructor(message: string, details: Omit<A2ATaskErrorDetails, 'state'>) {
    super(A2A_PROVIDER_ID, message, { cause: details.cause });
    this.taskId = details.taskId;
    this.contextId = details.contextId;
    this.statusText = details.statusText;
  }
}

/** The agent card could not be read: wrong URL, not a card, or no transport this client speaks. */
export class A2AAgentCardError extends ServiceError {
  readonly cardUrl: string;
  constructor(cardUrl: string, message: string, details: { status?: number; cause?: unknown } = {}) {
    super(A2A_PROVIDER_ID, message, details);
    this.cardUrl = cardUrl;
  }
}

/** The remote answered something the protocol does not allow (e.g. another context than the thread's). */
export class A2AProtocolError extends ServiceError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(A2A_PROVIDER_ID, message, options);
  }
}

/** JSON-RPC codes the A2A spec defines (the SDK's `A2A_ERROR_CODE`). */
const TASK_NOT_FOUND = -32001;

/**
 * Turns what the A2A SDK threw into Skein's typed errors. HTTP failures are already typed by the
 * fetch every request goes through (a2a-http.ts); what is left are the SDK's `A2AError`s (a
 * JSON-RPC `envelopeCode`, or an HTTP+JSON `statusCode`; an SSE error event carries one as its
 * `cause`), socket errors, and plain Errors for malformed answers.
 */
export function toSkeinError(error: unknown, signal?: AbortSignal, what = 'A2A request'): Error {
  if (error instanceof SkeinError) return error;
  if (signal?.aborted) return new AbortError(undefined, { cause: error });
  if (error instanceof Error && error.name === 'AbortError') return new AbortError(undefined, { cause: error });
  const protocol = protocolError(error);
  if (protocol) {
    const notFound = protocol.name === 'TaskNotFoundError' || protocol.envelopeCode === TASK_NOT_FOUND;
    const code = protocol.envelopeCode !== undefined ? ` ${protocol.envelopeCode}` : '';
    if (notFound) return new NotFoundError(A2A_PROVIDER_ID, `${what} failed: the remote agent does not know the task (${protocol.message}).`, { cause: error });
    return new ServiceError(A2A_PROVIDER_ID, `${what} failed with A2A error${code} (${protocol.name}): ${protocol.message}`, { cause: error });
  }
  if (error instanceof TypeError || isSocketError(error)) {
    return new ConnectionError(A2A_PROVIDER_ID, `${what} could not reach the remote agent: ${causeText(error)}`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ConnectionError(A2A_PROVIDER_ID, `${what} failed: the remote agent's answer could not be read (${message}).`, { cause: error });
}

interface SdkProtocolError {
  name: string;
  message: string;
  envelopeCode: number | undefined;
}

/** The SDK's A2AError (JSON-RPC or HTTP+JSON), directly or as the cause of an SSE error. */
function protocolError(error: unknown): SdkProtocolError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth++) {
    const { envelopeCode, transport } = e as { envelopeCode?: unknown; transport?: unknown };
    if (typeof envelopeCode === 'number' || transport === 'rest' || transport === 'jsonrpc') {
      return { name: e.name, message: e.message, envelopeCode: typeof envelopeCode === 'number' ? envelopeCode : undefined };
    }
  }
  return undefined;
}

function isSocketError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^(ECONN|EPIPE|ENOTFOUND|ETIMEDOUT|UND_ERR)/.test(code);
}

/** `fetch failed` says nothing; the cause (ECONNREFUSED ...) does. */
export function causeText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error) return `${error.message} (${cause.message})`;
  return error.message;
}

/**
 * The input of an A2A run cannot be sent as A2A parts (a content kind A2A has no part for, or no
 * content at all). Thrown before any request: nothing reached the remote agent.
 */
export class A2AInputError extends SkeinError {
  constructor(
    message: string,
    readonly kind?: string,
  ) {
    super(message);
  }
}

// So a durable run failed by one of these is rebuilt as the same class by getRun in any process.
for (const errorClass of [A2ATaskError, A2ATaskFailedError, A2ATaskRejectedError, A2ATaskCanceledError, A2AAuthRequiredError, A2AAgentCardError, A2AProtocolError, A2AInputError]) registerErrorClass(errorClass);
