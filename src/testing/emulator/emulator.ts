import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalRequestGuard } from '../../http/local-request-guard.js';
import { RequestBodyTooLargeError, readRequestBody } from '../../http/request-body.js';
import { registerAssistantsRoutes } from './assistants-routes.js';
import { registerChatCompletionsRoutes } from './chat-completions-routes.js';
import { registerConversationsRoutes } from './conversations-routes.js';
import { registerFoundryRoutes } from './foundry-routes.js';
import { EmulatedModel } from './emulated-model.js';
import { FaultQueue, type Fault } from './fault.js';
import { SseStream, sendError, sendJson, sendRawJson, type StreamSabotage } from './http-replies.js';
import { IdGenerator } from './id-generator.js';
import { registerResponsesRoutes, type ResponsesInputItemsListing } from './responses-routes.js';
import { DEFAULT_RUN_EXPIRY_SECONDS, Router, type RouteContext, type RouteHandler, type RouteRegistry, type RouteReply } from './router.js';

export interface EmulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** When set, requests need `Authorization: Bearer <apiKey>`, else a 401 error envelope. */
  apiKey?: string;
  /** A delay before every reply. */
  latencyMs?: number;
  /**
   * Hosts accepted in `Host` (and `Origin`) besides 127.0.0.1, localhost and [::1]: `name` (with
   * the emulator's port) or `name:port`. Anything else gets a 403 before any route runs (DNS
   * rebinding); so do CORS preflights and, from a browser page of another origin, any request.
   * Refused requests are not recorded in `requests`.
   */
  allowedHosts?: readonly string[];
  /**
   * What `GET /v1/responses/{id}/input_items` lists for a response that continues a chain or a
   * conversation: `full-context` (default, as the service does) lists every item the model saw,
   * the earlier turns' inputs and outputs included; `request-input` lists only that request's
   * own input, as some compatible servers do. Run history tests against both.
   */
  responsesInputItems?: ResponsesInputItemsListing;
  /**
   * Seconds from a run's creation to its `expires_at` on the Assistants and Foundry routes
   * (default 600, as on the services). A run still waiting in `requires_action` past it turns
   * `expired` and refuses tool outputs; 0 expires a waiting run at the next request that reads it.
   */
  runExpirySeconds?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** Parsed JSON, or undefined when there was no body, it was not JSON, or it was multipart. */
  body: unknown;
  /** The `x-request-id` header of the reply (every reply carries one, errors included). */
  requestId: string;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Looks like the start of a completion, then stops being JSON. */
const GARBAGE_JSON = '{"id": "chatcmpl-garbage", "object": "chat.completion", "choices": [{"ind';

/**
 * A loopback HTTP server speaking the wire formats of the AI services Skein talks to, backed by
 * a deterministic model, so the official SDKs run unmodified in tests and samples.
 */
export class Emulator implements RouteRegistry {
  readonly url: string;
  readonly openaiBaseURL: string;
  readonly model = new EmulatedModel();
  readonly requests: RecordedRequest[] = [];

  private readonly router = new Router();
  private readonly faults = new FaultQueue();
  private readonly ids = new IdGenerator();
  private readonly context: RouteContext = { model: this.model, ids: this.ids, runExpirySeconds: DEFAULT_RUN_EXPIRY_SECONDS };
  /** Aborts pending delays on stop, so nothing outlives the server. */
  private readonly lifetime = new AbortController();
  private readonly guard: LocalRequestGuard;
  private abortedStreamCount = 0;
  private unobservedAborts = 0;
  private abortWaiters: (() => void)[] = [];

  private constructor(
    private readonly server: Server,
    private readonly options: EmulatorOptions,
  ) {
    const { port } = server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    // Scripts and SDKs may POST JSON without a content-type (as the real services take it); a
    // browser page may send only JSON or an upload, and only from an allowed origin.
    this.guard = new LocalRequestGuard({
      port,
      allowedHosts: options.allowedHosts,
      allowedHostHint: '--allowed-host (the allowedHosts option)',
      bodyTypes: ['application/json', 'multipart/form-data'],
      contentTypeRule: 'browser-bodies',
    });
    this.openaiBaseURL = `${this.url}/v1`;
    if (options.runExpirySeconds !== undefined) this.runExpirySeconds = options.runExpirySeconds;
    registerChatCompletionsRoutes(this);
    registerAssistantsRoutes(this);
    registerResponsesRoutes(this, { inputItems: options.responsesInputItems });
    registerConversationsRoutes(this);
    registerFoundryRoutes(this);
  }

  static async start(options: EmulatorOptions = {}): Promise<Emulator> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    let emulator: Emulator;
    try {
      emulator = new Emulator(server, options);
    } catch (error) {
      server.close(); // a bad allowedHosts entry
      throw error;
    }
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      emulator.handle(request, response).catch((error: unknown) => emulator.failRequest(response, error));
    });
    return emulator;
  }

  /** Seconds from a run's creation to its `expires_at` for runs created from now on (see `EmulatorOptions.runExpirySeconds`). */
  get runExpirySeconds(): number {
    return this.context.runExpirySeconds;
  }

  set runExpirySeconds(seconds: number) {
    if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`runExpirySeconds must be a number of seconds >= 0; found ${seconds}.`);
    this.context.runExpirySeconds = seconds;
  }

  /** Streaming responses whose client closed the connection before the server finished. */
  get abortedStreams(): number {
    return this.abortedStreamCount;
  }

  /** Resolves at the next client abort of a stream, or at once if one happened since the last call. */
  waitForAbortedStream(): Promise<void> {
    if (this.unobservedAborts > 0) {
      this.unobservedAborts = 0;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.abortWaiters.push(resolve));
  }

  requestsTo(path: string): RecordedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  injectFault(fault: Fault): void {
    this.faults.add(fault);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  route(method: string, pattern: string, handler: RouteHandler): void {
    this.router.route(method, pattern, handler);
  }

  /** Every route the emulator serves, e.g. `{ method: 'POST', pattern: '/v1/responses' }`. */
  get routes(): { method: string; pattern: string }[] {
    return this.router.list();
  }

  async stop(): Promise<void> {
    this.lifetime.abort();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const refusal = this.guard.check(request);
    if (refusal) {
      request.resume();
      sendError(response, refusal.status, refusal.message, { code: `request_refused_${refusal.reason.replace('-', '_')}` });
      return;
    }
    const url = new URL(request.url ?? '/', this.url);
    const method = (request.method ?? 'GET').toUpperCase();
    // Set before any reply is written, so every route, error and fault carries it (the SDKs
    // expose it as `_request_id` / `requestID` on results and errors).
    const requestId = this.ids.next('req_');
    response.setHeader('x-request-id', requestId);
    const headers = flattenHeaders(request.headers);
    const query = Object.fromEntries(url.searchParams);
    const rawBody = await readBody(request);
    if (rawBody === undefined) {
      sendError(response, 413, `Request body is larger than ${MAX_BODY_BYTES} bytes.`);
      return;
    }
    // Multipart bodies (file uploads) reach their route as bytes; every other body must be JSON.
    const multipart = isMultipart(headers['content-type']);
    const parsed: ParsedBody = multipart ? { ok: true, value: undefined } : parseJson(rawBody.toString('utf8'));
    this.requests.push({ method, path: url.pathname, query, headers, body: parsed.ok ? parsed.value : undefined, requestId });

    if (!this.isAuthorized(headers)) {
      sendError(response, 401, 'Incorrect API key provided. Send `Authorization: Bearer <the emulator apiKey>`.');
      return;
    }
    if (!parsed.ok) {
      sendError(response, 400, `The request body is not valid JSON: ${parsed.reason}`);
      return;
    }
    if (this.options.latencyMs) await this.delay(this.options.latencyMs);

    const fault = this.faults.take(url.pathname, method);
    const replyDelay = fault?.kind === 'latency' && fault.phase === 'reply' ? fault.ms : 0;
    const sabotage = replyDelay ? undefined : await this.applyFault(fault, response);
    if (sabotage === 'replied') return;

    const match = this.router.match(method, url.pathname);
    if (match.kind === 'not-found') {
      sendError(response, 404, `No emulated route for ${method} ${url.pathname}.`);
      return;
    }
    if (match.kind === 'method-not-allowed') {
      sendError(response, 405, `${method} is not supported on ${url.pathname}; use ${match.allowed.join(' or ')}.`, {
        headers: { allow: match.allowed.join(', ') },
      });
      return;
    }
    const routeRequest = { method, path: url.pathname, params: match.params, query, headers, body: parsed.value, rawBody };
    const held: Promise<void>[] = [];
    const hold = replyDelay ? (send: () => void) => void held.push(this.delay(replyDelay).then(send)) : undefined;
    await match.handler(routeRequest, this.createReply(response, sabotage, hold), this.context);
    await Promise.all(held);
    // The SDKs read until the socket closes, so a route that forgot to end must not hang them.
    if (!response.writableEnded && !response.destroyed) {
      if (response.headersSent) response.end();
      else sendError(response, 500, `The emulated route for ${method} ${url.pathname} sent no reply.`);
    }
  }

  /** Applies the faults that replace or delay the reply; returns the ones the reply carries out. */
  private async applyFault(
    fault: Fault | undefined,
    response: ServerResponse,
  ): Promise<StreamSabotage | 'replied' | undefined> {
    switch (fault?.kind) {
      case undefined:
        return undefined;
      case 'status': {
        const headers: Record<string, string> =
          fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
        sendError(response, fault.status, fault.message ?? `Injected fault: HTTP ${fault.status}.`, { headers });
        return 'replied';
      }
      case 'latency':
        await this.delay(fault.ms);
        return undefined;
      case 'garbage-json':
        sendRawJson(response, 200, GARBAGE_JSON);
        return 'replied';
      case 'cut-stream':
        return { kind: 'cut', afterEvents: fault.afterEvents };
      case 'stall-stream':
        return { kind: 'stall', afterEvents: fault.afterEvents };
      case 'malformed-sse':
        return { kind: 'malformed' };
    }
  }

  /** `hold`, when a reply-phase latency fault applies, sends the JSON reply later. */
  private createReply(response: ServerResponse, sabotage: StreamSabotage | undefined, hold?: (send: () => void) => void): RouteReply {
    return {
      raw: response,
      json: (status, body, headers) => {
        // A stream fault on a plain JSON reply still breaks that reply, so it is never lost.
        if (sabotage?.kind === 'cut' || sabotage?.kind === 'stall') response.destroy();
        else if (sabotage?.kind === 'malformed') sendRawJson(response, 200, GARBAGE_JSON);
        else if (hold) {
          // The reply as it was when the route answered, whatever happens to the object meanwhile.
          const text = JSON.stringify(body);
          hold(() => {
            if (!response.destroyed) sendRawJson(response, status, text, headers);
          });
        }
        else sendJson(response, status, body, headers);
      },
      error: (status, message, details) => sendError(response, status, message, details),
      sse: (headers) =>
        new SseStream(response, { sabotage, headers, onClientAbort: () => this.recordAbortedStream() }),
    };
  }

  private recordAbortedStream(): void {
    // Closing sockets on stop is not a client going away.
    if (this.lifetime.signal.aborted) return;
    this.abortedStreamCount++;
    const waiters = this.abortWaiters;
    this.abortWaiters = [];
    if (waiters.length === 0) this.unobservedAborts++;
    for (const resolve of waiters) resolve();
  }

  private isAuthorized(headers: Record<string, string>): boolean {
    // Azure OpenAI sends its key in an `api-key` header instead.
    return this.options.apiKey === undefined || headers.authorization === `Bearer ${this.options.apiKey}` || headers['api-key'] === this.options.apiKey;
  }

  private async delay(ms: number): Promise<void> {
    try {
      await sleep(ms, undefined, { signal: this.lifetime.signal });
    } catch {
      // Stopped while waiting: the sockets are closed, the reply goes nowhere.
    }
  }

  private failRequest(response: ServerResponse, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (!response.headersSent && !response.destroyed) {
      sendError(response, 500, `The emulator failed: ${message}`);
    } else {
      response.destroy();
    }
  }
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/** The body's bytes, or undefined when it is too large. */
async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  try {
    return await readRequestBody(request, MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof RequestBodyTooLargeError) return undefined;
    throw error;
  }
}

function isMultipart(contentType: string | undefined): boolean {
  return (contentType ?? '').toLowerCase().startsWith('multipart/form-data');
}

type ParsedBody = { ok: true; value: unknown } | { ok: false; reason: string };

function parseJson(text: string): ParsedBody {
  if (text.trim().length === 0) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
