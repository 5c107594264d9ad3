import { isRestError } from './azure-peers.js';
import {
  AbortError,
  ConnectionError,
  ServiceError,
  SkeinError,
  serviceErrorForStatus,
} from 'skein';

/** How a Foundry run ended when it did not complete. */
export type FoundryRunFailure = 'failed' | 'cancelled' | 'expired' | 'timeout';

/**
 * A Foundry run ended without an answer (failed, cancelled by someone else, expired), or did not
 * end within `runTimeoutMs` (then it was cancelled). Names the run and thread so it can be looked
 * up in the Foundry portal.
 */
export class FoundryRunError extends ServiceError {
  constructor(
    provider: string,
    readonly threadId: string,
    readonly runId: string,
    readonly runStatus: FoundryRunFailure,
    readonly code: string | undefined,
    message: string,
  ) {
    super(provider, message);
  }
}

/** The run was still going after `runTimeoutMs`; Skein asked Foundry to cancel it. */
export class FoundryRunTimeoutError extends FoundryRunError {}

/**
 * Turns whatever `@azure/ai-agents` threw into Skein's typed errors, keeping status and request
 * id. The Azure pipeline has already retried what it retries (per `retryOptions`).
 */
export function toSkeinError(provider: string, error: unknown, signal?: AbortSignal): Error {
  if (error instanceof SkeinError) return error;
  if (signal?.aborted || (error instanceof Error && error.name === 'AbortError')) {
    return new AbortError(undefined, { cause: error });
  }
  if (isRestError(error)) {
    const status = error.statusCode;
    const requestId = error.response?.headers.get('x-request-id') ?? error.response?.headers.get('apim-request-id') ?? error.request?.requestId;
    const details = { status, requestId, cause: error };
    if (status === undefined) {
      return new ConnectionError(provider, `Could not reach ${provider}: ${firstLine(error.message)}`, details);
    }
    const text = `${provider} answered HTTP ${status}: ${firstLine(serviceMessage(error) ?? error.message)}${error.code && !serviceMessage(error) ? ` (${error.code})` : ''}`;
    return serviceErrorForStatus(provider, status, text, details, {
      rateLimit: 'rate limited after the configured retries; raise retryOptions.maxRetries or slow down',
      auth: 'check the credential and its role on the Foundry project',
    });
  }
  if (error instanceof SyntaxError) {
    return new ConnectionError(provider, `${provider} sent a reply that is not valid JSON: ${error.message}`, { cause: error });
  }
  if (error instanceof Error) {
    return new ConnectionError(provider, `${provider} request failed: ${error.message}`, { cause: error });
  }
  return new ServiceError(provider, `${provider} request failed: ${String(error)}`, { cause: error });
}

/** The `error.message` of the service's error envelope, from the SDK's details or the raw body (paged calls keep only that). */
function serviceMessage(error: { details?: unknown; response?: { bodyAsText?: string | null } }): string | undefined {
  let details = error.details as { error?: { message?: unknown } } | undefined;
  if (details?.error === undefined && error.response?.bodyAsText) {
    try {
      details = JSON.parse(error.response.bodyAsText) as typeof details;
    } catch {
      return undefined;
    }
  }
  return typeof details?.error?.message === 'string' ? details.error.message : undefined;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
