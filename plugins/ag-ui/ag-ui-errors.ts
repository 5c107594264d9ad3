import { SkeinError } from 'skein';

/**
 * A request the AG-UI server refused before any run started: `status` is the HTTP status it is
 * answered with (400 bad input, 401 no user, 404 unknown agent or thread, 405, 409 a thread it
 * cannot continue that way, 413 body too large, 415 not JSON). The message says what was
 * expected, what was found and what to do; it is sent to the client as `{ "error": message }`.
 */
export class AgUiRequestError extends SkeinError {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

/** A remote AG-UI agent ended a run with RUN_ERROR, or its stream broke the protocol. */
export class AgUiRunError extends SkeinError {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** The service's history of a thread the client's edit forks has fewer turns than the server's transcript of it. */
export class AgUiForkError extends SkeinError {
  constructor(
    readonly serviceThreadId: string | undefined,
    readonly inputs: number,
    readonly found: number,
  ) {
    super(
      `Expected service thread ${serviceThreadId ?? '(none)'} to hold more than ${inputs} user or system messages so it can fork after them, found ${found}. ` +
        'Its history changed outside this AG-UI server; start a new threadId.',
    );
  }
}
