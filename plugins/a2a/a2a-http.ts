import { otel } from './a2a-peers.js';
import { serviceErrorForStatus } from 'skein';
import type { A2AAuthMaterial, A2ACredentials } from './a2a-credentials.js';
import { A2A_PROVIDER_ID } from './a2a-errors.js';

export interface A2AFetchOptions {
  /** The user's `fetch`; the global one by default. */
  fetch: typeof fetch | undefined;
  /** Static headers for every request. */
  headers: Record<string, string> | undefined;
  credentials: A2ACredentials | undefined;
  /** What the card's security schemes need, once the card is known. */
  auth: () => Promise<A2AAuthMaterial | undefined>;
  /** Names the call in error messages, e.g. `A2A call to http://host/...`. */
  what: string;
  /** Finishes the message of a 401/403 (e.g. which schemes the card asks for). */
  authHint: () => string | undefined;
}

/**
 * The one `fetch` every request of an A2AAgent goes through (card, JSON-RPC, HTTP+JSON, v0.3):
 * it adds the credentials and the W3C trace context, and turns an HTTP failure into Skein's typed
 * error by its status, the same mapping as the OpenAI clients (401/403 AuthenticationError, 429
 * RateLimitError, 404 NotFoundError, others ServiceError with `status`), whatever the body says
 * (JSON, text/plain from a gateway, nothing). Only an A2A protocol error body on a 4xx other than
 * 401/403/429 passes through, so the SDK reads it as the A2A error it is (e.g. task not found).
 */
export function a2aFetch(options: A2AFetchOptions): typeof fetch {
  return async (input, init) => {
    const { url, headers } = await a2aRequestHeaders(options, requestUrl(input), new Headers(init?.headers));
    const response = await (options.fetch ?? fetch)(url, { ...init, headers });
    if (response.ok) return response;
    const text = await response.text().catch(() => '');
    if (passesThrough(response.status, text)) {
      return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
    }
    throw httpError(response, text, options);
  };
}

/**
 * What every request of an A2AAgent carries, on any binding: the W3C trace context, the answer to
 * the card's security schemes, the static `headers`, then the credentials' own headers (later
 * ones win). An API key the card wants in the query goes into the URL, unless `inUrl` is false
 * (gRPC, whose addresses have no query: it sends `query` as metadata).
 */
export async function a2aRequestHeaders(
  options: Pick<A2AFetchOptions, 'auth' | 'headers' | 'credentials'>,
  requestUrl: string,
  headers = new Headers(),
  inUrl = true,
): Promise<{ url: string; headers: Headers; query: Record<string, string> }> {
  const auth = await options.auth();
  const query = auth?.query ?? {};
  const url = inUrl ? withQuery(requestUrl, query) : requestUrl;
  otel?.propagation.inject(otel.context.active(), headers, { set: (carrier, key, value) => carrier.set(key, value) });
  for (const [k, v] of Object.entries(auth?.headers ?? {})) headers.set(k, v);
  for (const [k, v] of Object.entries(options.headers ?? {})) headers.set(k, v);
  const own = await options.credentials?.headers?.({ url });
  for (const [k, v] of Object.entries(own ?? {})) headers.set(k, v);
  return { url, headers, query };
}

function httpError(response: Response, text: string, options: A2AFetchOptions): Error {
  const status = response.status;
  const body = text.trim().replace(/\s+/g, ' ').slice(0, 300);
  const message = `${options.what} answered HTTP ${status}${response.statusText ? ` ${response.statusText}` : ''}${body ? `: ${body}` : ''}`;
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const authHint = status === 401 || status === 403 ? options.authHint() : undefined;
  return serviceErrorForStatus(A2A_PROVIDER_ID, status, message, { status, requestId }, {
    auth: authHint ?? 'give the remote agent\'s credentials through the A2AAgent `credentials` or `headers` option',
    rateLimit: 'the remote agent is rate limiting this client; retry later or slow down',
  });
}

/** A JSON-RPC error envelope, or an HTTP+JSON (google.rpc.Status) error with A2A's ErrorInfo. */
function passesThrough(status: number, text: string): boolean {
  if (status >= 500 || status === 401 || status === 403 || status === 429) return false;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return false;
  }
  if (typeof body !== 'object' || body === null) return false;
  const { jsonrpc, error } = body as { jsonrpc?: unknown; error?: { code?: unknown; details?: unknown } };
  if (jsonrpc === '2.0' && typeof error?.code === 'number') return true;
  return Array.isArray(error?.details) && error.details.some((d: { '@type'?: unknown }) => typeof d?.['@type'] === 'string' && d['@type'].endsWith('google.rpc.ErrorInfo'));
}

function requestUrl(input: Parameters<typeof fetch>[0]): string {
  if (typeof input === 'string') return input;
  if (input instanceof URL) return input.href;
  return input.url;
}

function withQuery(url: string, query: Record<string, string>): string {
  const entries = Object.entries(query);
  if (entries.length === 0) return url;
  const parsed = new URL(url);
  for (const [k, v] of entries) parsed.searchParams.set(k, v);
  return parsed.href;
}
