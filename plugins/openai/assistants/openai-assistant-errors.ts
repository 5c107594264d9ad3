import { registerErrorClass, ServiceError, SkeinError } from 'skein';

/**
 * A run ended in expired, failed, cancelled or incomplete. It names the run and thread so the
 * caller can inspect them (`client.beta.threads.runs.retrieve(runId, { thread_id })`).
 */
export class AssistantRunError extends ServiceError {
  constructor(
    provider: string,
    readonly runId: string,
    readonly threadId: string,
    readonly runStatus: string,
    readonly lastError?: { code?: string; message: string },
    message?: string,
  ) {
    super(
      provider,
      message ??
        `Run ${runId} on thread ${threadId} ended with status "${runStatus}"${lastError ? `: ${lastError.code ? `${lastError.code}: ` : ''}${lastError.message}` : ''}. The thread keeps what the run wrote; run again to retry.`,
    );
  }
}

/** A run did not finish within the polling timeout; Skein cancelled it. */
export class AssistantRunTimeoutError extends AssistantRunError {
  constructor(provider: string, runId: string, threadId: string, runStatus: string, timeoutMs: number) {
    super(
      provider,
      runId,
      threadId,
      runStatus,
      undefined,
      `Run ${runId} on thread ${threadId} was still "${runStatus}" after ${timeoutMs} ms; it was cancelled. Raise polling.timeoutMs for long runs.`,
    );
  }
}

/** The agent's assistant was deleted: the agent is in a terminal state. */
export class AssistantDeletedError extends SkeinError {}

/**
 * A vector store could not be made ready: some files failed processing (`failedFiles`, with
 * the service's error code, e.g. `unsupported_file`), or processing outlasted the polling
 * timeout (`failedFiles` empty). The store exists; `vectorStoreId` names it.
 */
export class VectorStoreError extends ServiceError {
  constructor(
    provider: string,
    readonly vectorStoreId: string,
    readonly failedFiles: readonly { fileId: string; code?: string; message: string }[],
    message: string,
  ) {
    super(provider, message);
  }
}

/**
 * A message holds content an assistant thread cannot carry (an audio clip, a file behind a web
 * URL, a tool call in input, an image in an assistant message, ...). Thrown before any request,
 * so nothing was sent, uploaded or created. `path` names the content, e.g. `input[0].contents[1]`.
 */
export class AssistantContentError extends SkeinError {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
  }
}

// So a durable run failed by one of these is rebuilt as the same class by getRun in any process.
for (const errorClass of [AssistantRunError, AssistantRunTimeoutError, AssistantDeletedError, VectorStoreError, AssistantContentError]) registerErrorClass(errorClass);
