import type { ServerResponse } from 'node:http';

/** The OpenAI error envelope body: `{"error":{"message","type","param","code"}}`. */
export interface ErrorEnvelope {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface ErrorDetails {
  type?: string;
  param?: string;
  code?: string;
  headers?: Record<string, string>;
}

export function errorEnvelope(status: number, message: string, details: ErrorDetails = {}): ErrorEnvelope {
  const defaults = defaultErrorKind(status);
  return {
    error: {
      message,
      type: details.type ?? defaults.type,
      param: details.param ?? null,
      code: details.code ?? defaults.code,
    },
  };
}

/** The type/code pair the real service uses for a status, so SDK error subclasses line up. */
function defaultErrorKind(status: number): { type: string; code: string | null } {
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' };
  if (status === 403) return { type: 'permission_error', code: null };
  if (status === 404) return { type: 'invalid_request_error', code: 'not_found' };
  if (status === 429) return { type: 'rate_limit_error', code: 'rate_limit_exceeded' };
  if (status >= 500) return { type: 'server_error', code: null };
  return { type: 'invalid_request_error', code: null };
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendRawJson(response, status, JSON.stringify(body), headers);
}

/** Sends text labelled as JSON, valid or not (fault injection needs the invalid kind). */
export function sendRawJson(
  response: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
  });
  response.end(text);
}

export function sendError(response: ServerResponse, status: number, message: string, details: ErrorDetails = {}): void {
  sendJson(response, status, errorEnvelope(status, message, details), details.headers);
}

/** How a stream should misbehave, decided by the fault that matched its request. */
export type StreamSabotage =
  | { kind: 'cut'; afterEvents: number }
  | { kind: 'stall'; afterEvents: number }
  | { kind: 'malformed' };

export interface SseStreamOptions {
  sabotage?: StreamSabotage;
  /** Called when the client closes the connection before the stream ended. */
  onClientAbort?: () => void;
  headers?: Record<string, string>;
}

/**
 * Writes Server-Sent Events. Chat Completions sends `data:` only and ends with `data: [DONE]`;
 * Responses and Assistants name their events. Every path ends (or destroys) the response,
 * because the SDKs read until the socket closes.
 */
export class SseStream {
  private eventsSent = 0;
  private finished = false;
  private clientGone = false;
  private readonly clientClosed: Promise<void>;

  constructor(
    private readonly response: ServerResponse,
    private readonly options: SseStreamOptions = {},
  ) {
    this.clientClosed = new Promise((resolve) => {
      response.on('close', () => {
        if (!this.finished) {
          this.clientGone = true;
          this.finished = true;
          options.onClientAbort?.();
        }
        resolve();
      });
    });
    response.writeHead(200, {
      ...options.headers,
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    response.flushHeaders();
  }

  /** False once nothing more should be written (client gone, stream cut or ended). */
  get open(): boolean {
    return !this.finished && !this.response.destroyed;
  }

  get clientAborted(): boolean {
    return this.clientGone;
  }

  /**
   * Sends one event; `data` is JSON-encoded unless it is a string. Resolves false when the
   * event was not delivered, so producers can stop.
   */
  async send(data: unknown, event?: string): Promise<boolean> {
    if (!this.open) return false;
    const sabotage = this.options.sabotage;
    if (sabotage?.kind === 'cut' && this.eventsSent >= sabotage.afterEvents) {
      this.cut();
      return false;
    }
    if (sabotage?.kind === 'stall' && this.eventsSent >= sabotage.afterEvents) {
      await this.clientClosed;
      return false;
    }
    const payload =
      sabotage?.kind === 'malformed' && this.eventsSent === 0
        ? '{"malformed": '
        : typeof data === 'string'
          ? data
          : JSON.stringify(data);
    await this.write(formatEvent(payload, event));
    this.eventsSent++;
    return this.open;
  }

  /** Ends the stream, optionally with a final `data:` line such as `[DONE]`. */
  async end(finalData?: string): Promise<void> {
    if (!this.open) return;
    const sabotage = this.options.sabotage;
    // A stream shorter than the cut point is still cut, so the fault is never silently lost.
    if (sabotage?.kind === 'cut') {
      this.cut();
      return;
    }
    if (sabotage?.kind === 'stall') {
      await this.clientClosed;
      return;
    }
    if (finalData !== undefined) await this.write(formatEvent(finalData));
    this.finished = true;
    this.response.end();
  }

  private cut(): void {
    this.finished = true;
    this.response.destroy();
  }

  /** Waits until the chunk is handed to the socket, so a following cut cannot swallow it. */
  private write(chunk: string): Promise<void> {
    if (this.response.destroyed) return Promise.resolve();
    const written = new Promise<void>((resolve) => this.response.write(chunk, () => resolve()));
    return Promise.race([written, this.clientClosed]);
  }
}

function formatEvent(data: string, event?: string): string {
  const eventLine = event === undefined ? '' : `event: ${event}\n`;
  const dataLines = data
    .split('\n')
    .map((line) => `data: ${line}\n`)
    .join('');
  return `${eventLine}${dataLines}\n`;
}
