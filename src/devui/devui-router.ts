import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a route handler gets: the request, the response, the path's `:name` parts (decoded) and the query. */
export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
}

/** A JSON answer; a handler that writes the response itself (a download, server-sent events) returns nothing. */
export interface JsonReply {
  status: number;
  body: unknown;
}

export type RouteHandler = (context: RequestContext) => Promise<JsonReply | void> | JsonReply | void;

/** One API route: a method, a path whose `:name` segments match any one segment, and its handler. */
export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  /** Served without the access token (only the session route, which trades the token for a cookie). */
  public?: boolean;
  handle: RouteHandler;
}

export const reply = (status: number, body: unknown): JsonReply => ({ status, body });

/** A small route table: the first route whose method and path match a request's handles it. */
export class Router {
  readonly #routes: { route: Route; segments: string[] }[];

  constructor(routes: readonly Route[]) {
    this.#routes = routes.map((route) => ({ route, segments: route.path.split('/').filter(Boolean) }));
  }

  /** The route for `method` and the decoded path `parts`, with its `:name` parts. */
  match(method: string, parts: readonly string[]): { route: Route; params: Record<string, string> } | undefined {
    for (const { route, segments } of this.#routes) {
      if (route.method !== method || segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      const matches = segments.every((segment, i) => {
        if (segment.startsWith(':')) params[segment.slice(1)] = parts[i]!;
        return segment.startsWith(':') || segment === parts[i];
      });
      if (matches) return { route, params };
    }
    return undefined;
  }
}
