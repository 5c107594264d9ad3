import OpenAI from 'openai';
import {
  AbortError,
  ConnectionError,
  ServiceError,
  SkeinError,
  serviceErrorForStatus,
} from 'skein';

/**
 * Turns whatever the openai SDK threw into Skein's typed errors, keeping status and request id.
 * The SDK has already retried what it retries (408/409/429/5xx, per `maxRetries`).
 */
export function toSkeinError(provider: string, error: unknown, signal?: AbortSignal): Error {
  if (error instanceof SkeinError) return error;
  if (signal?.aborted || error instanceof OpenAI.APIUserAbortError) {
    return new AbortError(undefined, { cause: error });
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return new ConnectionError(provider, `Could not reach ${provider}: ${error.message}`, { cause: error });
  }
  if (error instanceof OpenAI.APIError) {
    const details = { status: error.status, requestId: error.requestID ?? undefined, cause: error };
    const text = `${provider} answered HTTP ${error.status ?? '?'}: ${firstLine(error.message)}`;
    return serviceErrorForStatus(provider, error.status, text, details);
  }
  if (error instanceof SyntaxError) {
    return new ConnectionError(provider, `${provider} sent a reply that is not valid JSON: ${error.message}`, { cause: error });
  }
  if (error instanceof Error) {
    // Stream cuts and malformed event streams surface as plain Errors from the SDK.
    return new ConnectionError(provider, `${provider} request failed: ${error.message}`, { cause: error });
  }
  return new ServiceError(provider, `${provider} request failed: ${String(error)}`, { cause: error });
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
