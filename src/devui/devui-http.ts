import type { IncomingMessage, ServerResponse } from 'node:http';
import { ForkUnsupportedError, HistoryPositionError, NotFoundError, SerializationError, ServiceError, SkeinError, ThreadBusyError, ThreadCompatibilityError } from '../errors/skein-error.js';
import { RequestRefusedError } from '../http/local-request-guard.js';
import { RequestBodyTooLargeError, readRequestBody } from '../http/request-body.js';
import type { ErrorBody } from './devui-api-types.js';

/** A refusal a Dev UI route answers with: its HTTP status, and the error type the page shows. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorName = 'Error',
  ) {
    super(message);
  }
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** A readable error for the page, and the HTTP status it is answered with. */
export function describeError(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof HttpError) return { status: error.status, body: { name: error.errorName, message: error.message } };
  if (error instanceof RequestRefusedError || error instanceof RequestBodyTooLargeError) return { status: error.status, body: { name: error.name, message: error.message } };
  if (error instanceof SkeinError) {
    const body: ErrorBody = { name: error.constructor.name, message: error.message };
    if (error instanceof ServiceError) {
      if (error.status !== undefined) body.status = error.status;
      if (error.requestId !== undefined) body.requestId = error.requestId;
    }
    return { status: statusOf(error), body };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, body: { name: error instanceof Error ? error.constructor.name : 'Error', message } };
}

function statusOf(error: SkeinError): number {
  if (error instanceof SerializationError || error instanceof ThreadCompatibilityError || error instanceof HistoryPositionError) return 400;
  if (error instanceof ForkUnsupportedError || error instanceof ThreadBusyError) return 409;
  if (error instanceof NotFoundError) return 404;
  if (error instanceof ServiceError) return 502;
  return 500;
}

export function asObject(value: unknown, what: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new HttpError(400, `${what} must be a JSON object.`);
  return value as Record<string, unknown>;
}

export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const text = (await readRequestBody(req, MAX_BODY_BYTES)).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `The request body is not valid JSON: ${(error as Error).message}.`, 'SerializationError');
  }
}

/** The request body, which must be a JSON object. */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  return asObject(await readJsonBody(req), 'The request body');
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendText(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

/** No other site may frame the page (clickjacking), and the token in its address never leaves in a Referer. */
const PAGE_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'content-security-policy': "frame-ancestors 'none'", 'referrer-policy': 'no-referrer' };

export function sendText(res: ServerResponse, status: number, contentType: string, text: string): void {
  // A 413 closes the connection: the rest of the body is not read.
  res.writeHead(status, { 'content-type': contentType, ...PAGE_HEADERS, ...(status === 413 ? { connection: 'close' } : {}) });
  res.end(text);
}

/** Server-sent events on one response. */
export class SseWriter {
  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.flushHeaders();
  }

  /** `id`: the event's id, which a reconnecting client sends back as `Last-Event-ID`. */
  send(event: string, data: unknown, id?: number): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }
}
