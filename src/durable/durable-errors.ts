import { SkeinError } from '../errors/skein-error.js';

/** A durable run failed in the engine (not in the agent's own code). */
export class DurableRunError extends SkeinError {
  readonly runId: string | undefined;
  constructor(runId: string | undefined, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.runId = runId;
  }
}

/** The engine's database cannot be reached: nothing was started or recorded by this call. */
export class DurableEngineUnavailableError extends DurableRunError {}

/** The run was cancelled (`cancelRun`) or ran past its timeout. */
export class DurableRunCancelledError extends DurableRunError {}

/** No run has this id. */
export class DurableRunNotFoundError extends DurableRunError {}

/**
 * The run was started by another version of the application (its workflow code differs), so
 * this process will not replay it: it waits for a worker of its own version.
 */
export class DurableRunVersionError extends DurableRunError {
  readonly runVersion: string;
  readonly currentVersion: string;
  constructor(runId: string, runVersion: string, currentVersion: string) {
    super(
      runId,
      `Run "${runId}" was started by application version "${runVersion}", but this process runs version "${currentVersion}". ` +
        'Its recorded steps may not match the code here, so it is not replayed: run a worker of version ' +
        `"${runVersion}" to finish it, or cancel it (cancelRun) and start it again.`,
    );
    this.runVersion = runVersion;
    this.currentVersion = currentVersion;
  }
}
