import type { AgentsClient } from '@azure/ai-agents';
import type { PipelinePolicy, PipelineRequest } from '@azure/core-rest-pipeline';
import { bearerTokenAuthenticationPolicyName, isRestError } from './azure-peers.js';
import {
  AbortError,
  AuthenticationError,
  ConnectionError,
  registerErrorClass,
  ServiceError,
  serviceErrorForStatus,
  SkeinError,
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

/**
 * A message holds content Foundry cannot carry (a PDF's bytes inline, a file by URL, an image
 * type its models do not read...). Thrown before any request, so nothing of the turn was sent.
 */
export class FoundryInputError extends SkeinError {
  readonly messageIndex: number | undefined;
  readonly contentIndex: number | undefined;
  readonly kind: string;
  readonly mediaType: string | undefined;
  constructor(message: string, where: { messageIndex?: number; contentIndex?: number; kind: string; mediaType?: string }) {
    super(message);
    this.messageIndex = where.messageIndex;
    this.contentIndex = where.contentIndex;
    this.kind = where.kind;
    this.mediaType = where.mediaType;
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
  if (error instanceof CredentialFailure || isIdentityError(error)) {
    const cause = error instanceof CredentialFailure ? error.cause : error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new AuthenticationError(
      provider,
      `The credential could not get a token for ${provider}: ${firstLine(reason)} (check the credential: for DefaultAzureCredential, \`az login\` or the AZURE_* environment variables, and its role on the Foundry project).`,
      { cause },
    );
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

/**
 * Thrown for a credential's `getToken` failure, so it is told apart from a network failure: the
 * SDK's bearer-token policy lets the credential's own error through unchanged.
 */
class CredentialFailure extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'CredentialFailure';
  }
}

/** Errors `@azure/identity` credentials throw (matched by name: identity is not a dependency). */
const IDENTITY_ERRORS = new Set(['CredentialUnavailableError', 'AuthenticationError', 'AggregateAuthenticationError', 'AuthenticationRequiredError']);

function isIdentityError(error: unknown): boolean {
  return error instanceof Error && !isRestError(error) && IDENTITY_ERRORS.has(error.name);
}

const GUARD_BEFORE = 'skeinCredentialFailureBefore';
const GUARD_AFTER = 'skeinCredentialFailureAfter';

/**
 * Marks the failures of a client's credential as such: two pipeline policies around the SDK's
 * bearer-token policy see whether a failing request got past it. One that did not failed in
 * `getToken`. Added once per client (the client may be shared by many agents).
 */
export function reportCredentialFailures(client: AgentsClient): void {
  const pipeline = client.pipeline as AgentsClient['pipeline'] | undefined;
  if (!pipeline || pipeline.getOrderedPolicies().some((p) => p.name === GUARD_BEFORE)) return;
  if (!pipeline.getOrderedPolicies().some((p) => p.name === bearerTokenAuthenticationPolicyName)) return;
  const authorized = new WeakSet<PipelineRequest>();
  const before: PipelinePolicy = {
    name: GUARD_BEFORE,
    sendRequest: async (request, next) => {
      try {
        return await next(request);
      } catch (error) {
        if (authorized.has(request) || isRestError(error) || (error instanceof Error && error.name === 'AbortError')) throw error;
        throw new CredentialFailure(error);
      }
    },
  };
  const after: PipelinePolicy = {
    name: GUARD_AFTER,
    sendRequest: (request, next) => {
      authorized.add(request);
      return next(request);
    },
  };
  pipeline.addPolicy(before, { beforePolicies: [bearerTokenAuthenticationPolicyName] });
  pipeline.addPolicy(after, { afterPolicies: [bearerTokenAuthenticationPolicyName] });
}

/**
 * Runs a paged list call to the end. The SDK's paging helper replaces the service's error with
 * "Pagination failed with unexpected statusCode N" and drops the body; the raw reply is caught
 * through `onResponse` and put back as the error's `details`, so `toSkeinError` quotes it.
 */
export async function listAll<T>(
  list: (options: { onResponse: (response: { bodyAsText?: string | null; status: number }) => void }) => AsyncIterable<T>,
  max = Number.POSITIVE_INFINITY,
): Promise<T[]> {
  let failedBody: string | undefined;
  const onResponse = (response: { bodyAsText?: string | null; status: number }) => {
    if (response.status >= 400 && typeof response.bodyAsText === 'string') failedBody = response.bodyAsText;
  };
  const items: T[] = [];
  try {
    for await (const item of list({ onResponse })) {
      items.push(item);
      if (items.length >= max) break;
    }
  } catch (error) {
    if (isRestError(error) && failedBody !== undefined && error.details === undefined) {
      try {
        error.details = JSON.parse(failedBody) as unknown;
      } catch {
        // Not JSON: the SDK's own message stays.
      }
    }
    throw error;
  }
  return items;
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

// So a durable run failed by one of these is rebuilt as the same class by getRun in any process.
for (const errorClass of [FoundryRunError, FoundryInputError, FoundryRunTimeoutError]) registerErrorClass(errorClass);
