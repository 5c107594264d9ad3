import {
  AbortError,
  AuthenticationError,
  ConnectionError,
  NotFoundError,
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
 * Turns what the A2A SDK threw into Skein's typed errors. The SDK throws plain Errors for HTTP
 * and SSE problems and `A2AError`s (with a JSON-RPC `envelopeCode`) for protocol errors.
 */
export function toSkeinError(error: unknown, signal?: AbortSignal, what = 'A2A request'): Error {
  if (error instanceof SkeinError) return error;
  if (signal?.aborted) return new AbortError(undefined, { cause: error });
  if (error instanceof Error && error.name === 'AbortError') return new AbortError(undefined, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  const code = envelopeCode(error);
  if (code === TASK_NOT_FOUND) {
    return new NotFoundError(A2A_PROVIDER_ID, `${what} failed: the remote agent does not know the task (${message}).`, { cause: error });
  }
  if (code !== undefined) {
    return new ServiceError(A2A_PROVIDER_ID, `${what} failed with A2A error ${code}: ${message}`, { cause: error });
  }
  if (error instanceof TypeError || isSocketError(error)) {
    return new ConnectionError(A2A_PROVIDER_ID, `${what} could not reach the remote agent: ${causeText(error)}`, { cause: error });
  }
  const status = /Status: (\d{3})/.exec(message)?.[1];
  if (status !== undefined) {
    const n = Number(status);
    const details = { status: n, cause: error };
    if (n === 401 || n === 403) return new AuthenticationError(A2A_PROVIDER_ID, `${what}: the remote agent refused the credentials (HTTP ${n}).`, details);
    if (n === 404) return new NotFoundError(A2A_PROVIDER_ID, `${what}: HTTP 404 from the remote agent's endpoint.`, details);
    return new ServiceError(A2A_PROVIDER_ID, `${what} failed: ${message}`, details);
  }
  return new ConnectionError(A2A_PROVIDER_ID, `${what} failed: ${message}`, { cause: error });
}

function envelopeCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { envelopeCode?: unknown }).envelopeCode;
  return typeof code === 'number' ? code : undefined;
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
