import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Container } from 'inversify';
import type { SkeinConfig } from '../container/skein-config.js';
import { ConfigurationError } from '../errors/skein-error.js';
import { AccessToken } from '../http/access-token.js';
import { assertBindable, isLoopbackAddress, isWildcardAddress } from '../http/bind-address.js';
import { LocalRequestGuard } from '../http/local-request-guard.js';
import { chatRoutes } from './chat-route.js';
import { describeError, HttpError, sendJson } from './devui-http.js';
import { reply, Router } from './devui-router.js';
import { DevUIState } from './devui-state.js';
import { forkRoute } from './fork-route.js';
import { importExportRoutes } from './import-export-routes.js';
import { loadAgents, traceCollector } from './load-agents.js';
import { saveFinishedDurableRuns } from './durable-chat.js';
import { servePageAsset } from './page-assets.js';
import { sessionRoute } from './session-route.js';
import { ThreadIndex } from './thread-index.js';
import { threadRoutes } from './thread-routes.js';
import { toolRoutes } from './tool-routes.js';
import { traceRoutes } from './trace-routes.js';

export type { ApprovalAnswer, LoadOutcome, PendingApproval, RunSettings, ThreadSummary } from './devui-api-types.js';

export interface DevUIOptions {
  /** A config file (JSON or YAML, as `createContainer(file)` reads it) or a config object. */
  config: string | SkeinConfig;
  /** 0 picks a free port. Default 4310. */
  port?: number;
  /** Default 127.0.0.1. Any other address than a loopback one needs `expose: true`. */
  host?: string;
  /**
   * Listen on a non-loopback `host` (other machines can then reach the Dev UI, and through it
   * run the agents and their tools on this machine). A warning says so at start.
   */
  expose?: boolean;
  /**
   * Hosts the browser may use besides 127.0.0.1, localhost and [::1] (and a non-wildcard `host`):
   * `name` (with the Dev UI's port) or `name:port`. Any other `Host` or `Origin` gets a 403.
   */
  allowedHosts?: readonly string[];
  /**
   * The access token the page and API calls must present. Default: a new random one each start,
   * in `pageUrl`. `false` turns the check off (for scripts on a trusted machine), with a warning.
   */
  token?: string | false;
  /** Where start-up warnings go (token off, exposed address). Default `console.warn`. */
  warn?: (message: string) => void;
  /** Where the thread index lives. Default `.skein/devui-threads` under the working directory. */
  threadsDir?: string;
  /** Environment for `${VAR}` interpolation in a config file. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /**
   * Keep the messages sent to and received from the model in each turn's trace (the telemetry
   * plugin's `captureContent`). Default: the config's telemetry setting, else
   * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, else off.
   */
  captureContent?: boolean;
}

export interface DevUI {
  /** The server's base address, e.g. `http://127.0.0.1:4310` (API paths go after it). */
  readonly url: string;
  /** What to open in a browser: `url` with the access token (`/?token=...`); `url` when the token is off. */
  readonly pageUrl: string;
  /** The access token (send it as `Authorization: Bearer <token>` from scripts), undefined when off. */
  readonly token: string | undefined;
  /** The hosts the browser may use (Host and Origin checks). */
  readonly allowedHosts: readonly string[];
  readonly port: number;
  readonly container: Container;
  readonly threads: ThreadIndex;
  /** Stops every run in flight, closes the server and disposes the container (closing MCP servers and other plugin resources). */
  close(): Promise<void>;
}

/**
 * Starts the Dev UI: a local web page to chat with the agents a config describes and to inspect,
 * continue, download, load and delete their threads.
 */
export async function startDevUI(options: DevUIOptions): Promise<DevUI> {
  const bindHost = options.host ?? '127.0.0.1';
  assertBindable(bindHost, options.expose === true, 'The Dev UI', '--expose (expose: true)');
  if (typeof options.token === 'string' && options.token.length < AccessToken.MIN_LENGTH) {
    throw new ConfigurationError(`token: expected at least ${AccessToken.MIN_LENGTH} characters, found ${options.token.length}. Leave it out for a random one.`);
  }
  const traces = await traceCollector();
  const { container, agents, captureContent } = await loadAgents(options.config, options.env, traces, options.captureContent);
  const threads = new ThreadIndex(path.resolve(options.threadsDir ?? path.join(process.cwd(), '.skein', 'devui-threads')));
  const state = new DevUIState(container, agents, threads, { collector: traces?.collector, captureContent });
  const durableRunner = await state.launchDurable();
  if (durableRunner) await saveFinishedDurableRuns(state, options.warn ?? ((message: string) => console.warn(message)));
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 4310, bindHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port, address } = server.address() as AddressInfo;
  // A specific address the user bound to is one they will type; a wildcard is not an address.
  const bound = isWildcardAddress(address) || isLoopbackAddress(address) ? [] : [bracketed(address)];
  let guard: LocalRequestGuard;
  try {
    guard = new LocalRequestGuard({ port, allowedHosts: [...bound, ...(options.allowedHosts ?? [])], allowedHostHint: '--allowed-host (allowedHosts)' });
  } catch (error) {
    server.close();
    throw error;
  }
  const token = options.token === false ? undefined : new AccessToken(port, options.token);
  const host = isWildcardAddress(address) ? (address.includes(':') ? '[::1]' : '127.0.0.1') : bracketed(address);
  const url = `http://${host}:${port}`;
  const pageUrl = token ? `${url}/?token=${token.value}` : url;
  const app = new DevUIServer(state, guard, token, url);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => void app.handle(req, res));
  const warn = options.warn ?? ((message: string) => console.warn(message));
  for (const warning of startWarnings({ address: `${bracketed(address)}:${port}`, exposed: !isLoopbackAddress(address), token: token !== undefined, url, threads: threads.directory, guard })) warn(warning);
  return {
    url,
    pageUrl,
    token: token?.value,
    allowedHosts: guard.allowedHosts,
    port,
    container,
    threads,
    close: async () => {
      await app.close(server);
      await durableRunner?.shutdown();
      // The container is the Dev UI's own: disposing it closes what its plugins opened (MCP servers' connections and processes).
      await container.unbindAllAsync();
    },
  };
}

function bracketed(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

/** What a user must know when the Dev UI is reachable by more than their own browser tab. */
function startWarnings(at: { address: string; exposed: boolean; token: boolean; url: string; threads: string; guard: LocalRequestGuard }): string[] {
  const powers = `run the configured agents and their tools (on this machine, with your permissions) and read, change and delete the threads in ${at.threads}`;
  const warnings: string[] = [];
  if (!at.token) {
    warnings.push(`Warning: the Dev UI's access token is off (--no-token): any program or user that can reach ${at.url} can ${powers}.`);
  }
  if (at.exposed) {
    warnings.push(
      `Warning: the Dev UI listens on ${at.address} (--expose), so other machines can reach it: whoever does${at.token ? ' and has the printed address with its token' : ''} can ${powers}. ` +
        `Traffic is plain HTTP. Browsers may use only ${at.guard.allowedHosts.join(', ')}; add a name with --allowed-host.`,
    );
  }
  return warnings;
}

/** Wires one Dev UI's request handling: the request guard, the page, the session and token checks, then the API routes. */
class DevUIServer {
  readonly #router: Router;

  constructor(
    private readonly state: DevUIState,
    private readonly guard: LocalRequestGuard,
    private readonly token: AccessToken | undefined,
    private readonly url: string,
  ) {
    this.#router = new Router([
      sessionRoute(token, url),
      { method: 'GET', path: '/api/agents', handle: () => reply(200, { agents: [...state.agents.values()] }) },
      ...toolRoutes(state),
      ...chatRoutes(state),
      ...importExportRoutes(state),
      ...threadRoutes(state),
      forkRoute(state),
      ...traceRoutes(state),
    ]);
  }

  async close(server: Server): Promise<void> {
    for (const run of this.state.runs.values()) run.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      // Before the body is read or any route runs: a refused request reads and changes nothing.
      const refusal = this.guard.check(req);
      if (refusal) throw refusal;
      const url = new URL(req.url ?? '/', 'http://devui.local');
      const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      const method = req.method ?? 'GET';
      if (await servePageAsset(res, method, url.pathname)) return;
      if (parts[0] !== 'api') throw new HttpError(404, `No page at ${url.pathname}.`);
      const matched = this.#router.match(method, parts);
      if (!matched?.route.public) {
        const unauthorized = this.token?.check(req, `open the address the Dev UI printed when it started (${this.url}/?token=...), or send Authorization: Bearer <token>. Start it with --no-token to turn the check off.`);
        if (unauthorized) throw unauthorized;
      }
      if (!matched) throw new HttpError(404, `No API route ${method} ${url.pathname}.`);
      const result = await matched.route.handle({ req, res, params: matched.params, query: url.searchParams });
      if (result) sendJson(res, result.status, result.body);
    } catch (error) {
      if (res.headersSent) {
        res.end();
        return;
      }
      const { status, body } = describeError(error);
      sendJson(res, status, { error: body });
    }
  }
}
