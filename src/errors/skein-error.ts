import type { ChatMessage } from '../messages/chat-message.js';

/**
 * Every error Skein throws on purpose is a `SkeinError`; each subclass is a failure a caller
 * handles differently. Messages say what was expected, what was found and what to do.
 */
export class SkeinError extends Error {
  /**
   * Set on the error of a failed run with `keepPartial`: the partial assistant message the thread
   * recorded (`additionalProperties.partial === true`).
   */
  partial?: ChatMessage;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Serialized state (a thread, a store, a message) that cannot be read back. */
export class SerializationError extends SkeinError {
  /** Where in the input the problem is, e.g. `$.store.messages[3].contents[0].kind`. */
  readonly path: string;
  constructor(path: string, message: string, options?: { cause?: unknown }) {
    super(`${path}: ${message}`, options);
    this.path = path;
  }
}

/** A thread used with an agent that cannot continue it (other provider, other thread kind). */
export class ThreadCompatibilityError extends SkeinError {}

/** A run was started on a thread that is already running, with the `reject` concurrency policy. */
export class ThreadBusyError extends SkeinError {}

/** The container or an agent was configured wrongly. */
export class ConfigurationError extends SkeinError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[] | string) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(list.length === 1 ? list[0]! : `Invalid configuration:\n- ${list.join('\n- ')}`);
    this.problems = list;
  }
}

/** A run was aborted through its AbortSignal or by unsubscribing. */
export class AbortError extends SkeinError {
  constructor(message = 'The run was aborted; the thread is unchanged.', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A failure reported by (or on the way to) an AI service. */
export class ServiceError extends SkeinError {
  /** HTTP status, when the service answered. */
  readonly status: number | undefined;
  /** The service's request id, when it sent one. */
  readonly requestId: string | undefined;
  /** The provider (client id) that failed, e.g. `openai-chat`. */
  readonly provider: string;
  constructor(
    provider: string,
    message: string,
    details: { status?: number; requestId?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause });
    this.provider = provider;
    this.status = details.status;
    this.requestId = details.requestId;
  }
}

/** HTTP 429 after the retries ran out. */
export class RateLimitError extends ServiceError {}
/** HTTP 401/403. */
export class AuthenticationError extends ServiceError {}
/** The connection failed, was cut, or timed out, or the reply could not be parsed. */
export class ConnectionError extends ServiceError {}
/** A referenced remote object (thread, response, conversation) does not exist. */
export class NotFoundError extends ServiceError {}

/**
 * A store append lost a race: another process appended to the thread since this one read it.
 * Nothing of this turn was written; reload the thread and run the turn again.
 */
export class ThreadConflictError extends SkeinError {
  constructor(
    message: string,
    readonly expectedVersion?: number,
    readonly actualVersion?: number,
  ) {
    super(message);
  }
}

/**
 * The typed error for an HTTP status a service answered with: one mapping for every plugin.
 * `hints` finish the message with what to do (they differ per SDK).
 */
export function serviceErrorForStatus(
  provider: string,
  status: number | undefined,
  text: string,
  details: { status?: number; requestId?: string; cause?: unknown },
  hints: { rateLimit?: string; auth?: string } = {},
): ServiceError {
  switch (status) {
    case 429:
      return new RateLimitError(provider, `${text} (${hints.rateLimit ?? 'rate limited after the configured retries; raise maxRetries or slow down'}).`, details);
    case 401:
    case 403:
      return new AuthenticationError(provider, `${text} (${hints.auth ?? 'check the API key or credential'}).`, details);
    case 404:
      return new NotFoundError(provider, text, details);
    default:
      return new ServiceError(provider, text, details);
  }
}

/**
 * A durable message store failed: the server is unreachable, refused the credentials, or a
 * statement failed. Nothing of the failed call is acknowledged. The message never contains the
 * connection's password.
 */
export class StoreError extends SkeinError {
  /** The store id, e.g. `sqlite`, `redis`, `postgres`. */
  readonly store: string;
  constructor(store: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.store = store;
  }
}

/**
 * `agent.forkThread` cannot fork this thread here: the kind of thread (an A2A context, owned by
 * the remote) or the point asked for (a cut the service cannot continue from). Thrown before
 * anything is created, so nothing needs cleaning up.
 */
export class ForkUnsupportedError extends SkeinError {
  /** The provider (client id) of the thread, e.g. `a2a`. */
  readonly provider: string;
  constructor(provider: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.provider = provider;
  }
}

/** A history position (`at`, `before`) that is not in the thread: an index out of range, an unknown message id. */
export class HistoryPositionError extends SkeinError {
  constructor(
    message: string,
    /** The position that was given. */
    readonly position: number | string,
  ) {
    super(message);
  }
}

/** The thread's history cannot be read: the service keeps none the client can fetch (e.g. an A2A remote without task history). */
export class HistoryUnavailableError extends SkeinError {
  readonly provider: string;
  constructor(provider: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.provider = provider;
  }
}
