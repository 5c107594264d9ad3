import type { ServerResponse } from 'node:http';
import type { EmulatedModel } from './emulated-model.js';
import type { ErrorDetails, SseStream } from './http-replies.js';
import type { IdGenerator } from './id-generator.js';

/**
 * What a route sees of a request; the body is already parsed JSON (or undefined). A
 * `multipart/form-data` body is not parsed: `body` is undefined and the route reads `rawBody`
 * (see `readMultipart`).
 */
export interface RouteRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  /** The body's bytes as received (empty when there was none). */
  rawBody?: Buffer;
}

/** How a route answers; faults injected into the emulator are applied underneath. */
export interface RouteReply {
  json(status: number, body: unknown, headers?: Record<string, string>): void;
  error(status: number, message: string, details?: ErrorDetails): void;
  /** Starts a Server-Sent Events reply (status 200). */
  sse(headers?: Record<string, string>): SseStream;
  /** The raw response, for anything the helpers above do not cover. */
  readonly raw: ServerResponse;
}

/** Shared state every service's routes use. */
export interface RouteContext {
  model: EmulatedModel;
  ids: IdGenerator;
  /** Seconds from a run's creation to its `expires_at` (600 on the services; see `Emulator.runExpirySeconds`). */
  runExpirySeconds: number;
}

/** What the Assistants v2 and Foundry Agents run lifecycles say: runs expire 10 minutes after creation. */
export const DEFAULT_RUN_EXPIRY_SECONDS = 600;

export type RouteHandler = (request: RouteRequest, reply: RouteReply, context: RouteContext) => void | Promise<void>;

/** Anything routes can be registered on (the Emulator is one). */
export interface RouteRegistry {
  route(method: string, pattern: string, handler: RouteHandler): void;
}

interface Route {
  method: string;
  segments: string[];
  handler: RouteHandler;
}

export type RouteMatch =
  | { kind: 'found'; handler: RouteHandler; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

/** Method + path patterns with `:param` segments, e.g. `/v1/threads/:threadId/runs`. */
export class Router implements RouteRegistry {
  private readonly routes: Route[] = [];

  route(method: string, pattern: string, handler: RouteHandler): void {
    this.routes.push({ method: method.toUpperCase(), segments: splitPath(pattern), handler });
  }

  /** Every registered route as `METHOD /pattern`, in registration order. */
  list(): { method: string; pattern: string }[] {
    return this.routes.map((route) => ({ method: route.method, pattern: `/${route.segments.join('/')}` }));
  }

  match(method: string, path: string): RouteMatch {
    const segments = splitPath(path);
    const allowed: string[] = [];
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments);
      if (params === undefined) continue;
      if (route.method === method.toUpperCase()) return { kind: 'found', handler: route.handler, params };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  }
}

function splitPath(path: string): string[] {
  return path.split('/').filter((segment) => segment.length > 0);
}

function matchSegments(pattern: readonly string[], path: readonly string[]): Record<string, string> | undefined {
  if (pattern.length !== path.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i].startsWith(':')) {
      params[pattern[i].slice(1)] = safeDecode(path[i]);
    } else if (pattern[i] !== path[i]) {
      return undefined;
    }
  }
  return params;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
