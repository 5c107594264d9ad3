import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigurationError, SkeinError } from '../errors/skein-error.js';

/** Why a request was refused before any route saw it. */
export type RefusalReason = 'host' | 'origin' | 'preflight' | 'content-type' | 'token';

/**
 * A request a local server refused before it read or changed anything: a Host or Origin that is
 * not allowed (403), a CORS preflight (403), a body that is not of an accepted type (415), or a
 * missing access token (401). `status` is the HTTP status to answer with.
 */
export class RequestRefusedError extends SkeinError {
  constructor(
    readonly status: 401 | 403 | 415,
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

/** Loopback names every local server accepts in `Host`. */
export const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', 'localhost', '[::1]'];

export interface LocalRequestGuardOptions {
  /** The port the server listens on: a `Host` without an explicit port must carry it. */
  port: number;
  /**
   * Hosts accepted besides 127.0.0.1, localhost and [::1]: `name` (with the server's port) or
   * `name:port` (that port exactly, e.g. behind a proxy).
   */
  allowedHosts?: readonly string[];
  /** How the user adds a host, named in the 403 (e.g. `--allowed-host or the allowedHosts option`). */
  allowedHostHint?: string;
  /** Media types a body may have on a request that is not GET/HEAD. Default `application/json` only. */
  bodyTypes?: readonly string[];
  /**
   * `always` (default): every request but GET/HEAD must say `content-type: <a body type>`, body or
   * not. `browser-bodies`: only requests that carry a body and come from a browser (an `Origin`
   * header: the Fetch standard has browsers send it on every request that is not GET/HEAD, forms
   * included), so scripts and SDKs that POST JSON without the header keep working (Node's fetch
   * sends text/plain and even Sec-Fetch-Mode), while no page can send a text/plain or form body.
   */
  contentTypeRule?: 'always' | 'browser-bodies';
}

/**
 * The request checks every HTTP server Skein starts for local use shares (the Dev UI, the
 * emulator; the A2A server and an MCP Streamable HTTP server plug in the same way), so that no
 * web page the developer visits can drive them, directly or through DNS rebinding:
 *
 * 1. **Host allowlist**: `Host` must be 127.0.0.1, localhost or [::1] with the server's port, or
 *    a host the user added. A DNS-rebound request names the attacker's domain: 403.
 * 2. **Origin**: when present it must be `http(s)://` + an allowed host; `null` and other sites: 403.
 * 3. **No CORS**: an `OPTIONS` preflight is refused (403) and no `Access-Control-*` header is
 *    ever sent, so a browser never lets another origin read a reply or send a non-simple request.
 * 4. **Typed bodies**: a state-changing request must declare an accepted media type (JSON by
 *    default): `text/plain` and form bodies, which pages can send without a preflight, get 415.
 *
 * Run it first, before reading the body or routing. On plain `node:http`:
 *
 * @example
 * ```ts
 * const guard = new LocalRequestGuard({ port, allowedHosts: ['devbox.local'] });
 * createServer((req, res) => {
 *   const refusal = guard.check(req);
 *   if (refusal) return sendRefusal(res, refusal); // or your own error envelope
 *   // ... routes
 * });
 * ```
 *
 * On express (the A2A server in `plugins/a2a`, which imports it from `skein`): after `listen`
 * knows the port, `app.use(guard.middleware())` before the agent card and JSON-RPC routes
 * (JSON-RPC bodies are `application/json`, so the default body rule fits). Where a server needs
 * authentication too, check an `AccessToken` (bearer or cookie) right after the guard, as the Dev
 * UI does; a server with its own scheme (A2A security schemes) keeps it and still runs the guard
 * first. An MCP Streamable HTTP server does the same (the MCP spec asks servers to validate
 * `Origin` against DNS rebinding).
 */
export class LocalRequestGuard {
  readonly #port: number;
  /** Host names accepted with the server's port. */
  readonly #names: Set<string>;
  /** `name:port` entries accepted exactly. */
  readonly #hostPorts: Set<string>;
  readonly #hint: string;
  readonly #bodyTypes: readonly string[];
  readonly #rule: 'always' | 'browser-bodies';

  constructor(options: LocalRequestGuardOptions) {
    this.#port = options.port;
    this.#hint = options.allowedHostHint ?? 'the allowedHosts option';
    this.#bodyTypes = (options.bodyTypes ?? ['application/json']).map((type) => type.toLowerCase());
    this.#rule = options.contentTypeRule ?? 'always';
    this.#names = new Set(LOOPBACK_HOSTS);
    this.#hostPorts = new Set();
    for (const entry of options.allowedHosts ?? []) {
      const host = parseAllowedHost(entry, this.#hint);
      if (host.port === undefined) this.#names.add(host.name);
      else this.#hostPorts.add(`${host.name}:${host.port}`);
    }
  }

  /** The hosts this guard accepts, as a user would type them in the address bar. */
  get allowedHosts(): string[] {
    return [...[...this.#names].map((name) => `${name}:${this.#port}`), ...this.#hostPorts];
  }

  /** The refusal for a request, or undefined when it may go on to the routes. */
  check(req: IncomingMessage): RequestRefusedError | undefined {
    const host = req.headers.host;
    // Without a port, Host names a default one: 80, or 443 when a TLS proxy forwards it.
    if (host === undefined || !this.isAllowedHost(host, [80, 443])) {
      return new RequestRefusedError(
        403,
        'host',
        `Host ${JSON.stringify(host ?? '')} is not allowed: this server answers only ${this.allowedHosts.join(', ')}. ` +
          `Open it at one of those, or add the host with ${this.#hint}.`,
      );
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !this.#isAllowedOrigin(origin)) {
      return new RequestRefusedError(
        403,
        'origin',
        `Requests from origin ${origin} are not allowed: only pages served from ${this.allowedHosts.join(', ')} may call this server. ` +
          `Open the page at its own address, or add the host with ${this.#hint}.`,
      );
    }
    const method = (req.method ?? 'GET').toUpperCase();
    if (method === 'OPTIONS') {
      return new RequestRefusedError(403, 'preflight', 'Cross-origin requests are not allowed: this server answers no CORS preflight (OPTIONS).');
    }
    if (method !== 'GET' && method !== 'HEAD' && this.#needsContentType(req)) {
      const type = mediaType(req.headers['content-type']);
      if (type === undefined || !this.#bodyTypes.includes(type)) {
        return new RequestRefusedError(
          415,
          'content-type',
          `${method} requests must send content-type: ${this.#bodyTypes.join(' or ')}; got ${type === undefined ? 'none' : type}.`,
        );
      }
    }
    return undefined;
  }

  /** Express/connect-style middleware: refuses with a JSON `{error: {name, message}}`, else calls next. */
  middleware(): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
    return (req, res, next) => {
      const refusal = this.check(req);
      if (refusal) sendRefusal(res, refusal);
      else next();
    };
  }

  /** Whether `host` (a Host header value, or an Origin's host) names this server; a missing port is one of `defaultPorts`. */
  isAllowedHost(host: string, defaultPorts: readonly number[] = [80]): boolean {
    const parsed = splitHostPort(host.toLowerCase());
    if (!parsed) return false;
    const { name } = parsed;
    return (parsed.port === undefined ? defaultPorts : [parsed.port]).some((port) => (port === this.#port && this.#names.has(name)) || this.#hostPorts.has(`${name}:${port}`));
  }

  #isAllowedOrigin(origin: string): boolean {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false; // `null` (sandboxed pages, file:, some redirects) and garbage
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
    return url.hostname !== '' && this.isAllowedHost(`${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`);
  }

  #needsContentType(req: IncomingMessage): boolean {
    if (this.#rule === 'always') return true;
    const fromBrowser = req.headers.origin !== undefined;
    const length = req.headers['content-length'];
    const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
    return fromBrowser && hasBody;
  }
}

/** Writes a refusal as `{error: {name, message}}` with its status; the body of the request is discarded. */
export function sendRefusal(res: ServerResponse, refusal: RequestRefusedError): void {
  const body = JSON.stringify({ error: { name: refusal.name, message: refusal.message } });
  res.writeHead(refusal.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(body);
}

/** The media type of a content-type header, lower case, without parameters. */
function mediaType(header: string | undefined): string | undefined {
  const type = header?.split(';')[0]?.trim().toLowerCase();
  return type ? type : undefined;
}

/** `name`, `name:port`, `[v6]`, `[v6]:port`; undefined when it is not a plain host. */
function splitHostPort(value: string): { name: string; port: number | undefined } | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(value);
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && port > 65535) return undefined;
  return { name: match[1]!, port };
}

/** An allowed-host entry as the user gave it, checked: a host, not a URL. */
function parseAllowedHost(entry: string, hint: string): { name: string; port: number | undefined } {
  const trimmed = entry.trim().toLowerCase();
  const bare = /^[0-9a-f]*:[0-9a-f:]*:[0-9a-f:.]*$/.test(trimmed) ? `[${trimmed}]` : trimmed; // an IPv6 address without brackets
  const parsed = splitHostPort(bare);
  if (!parsed) {
    throw new ConfigurationError(
      `${hint}: expected a host name or host:port (e.g. devbox.local or devbox.local:8443), found ${JSON.stringify(entry)}. Give the host alone, without a scheme or path.`,
    );
  }
  return parsed;
}
