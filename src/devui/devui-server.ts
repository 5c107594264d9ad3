import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Container } from 'inversify';
import type { Observer, Subscription } from 'rxjs';
import type { TracerProvider } from '@opentelemetry/api';
import type { AIAgent } from '../agents/ai-agent.js';
import { ChatAgent } from '../agents/chat-agent.js';
import type { ChatOptions } from '../clients/chat-options.js';
import type { AITool, ToolSource } from '../tools/ai-tool.js';
import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import { waitingApprovalsOf } from '../agents/function-approvals.js';
import { runToolCall, ToolApprovalRequiredError } from '../agents/tool-approval-gate.js';
import { responseFromUpdates } from '../clients/chat-response.js';
import { agentToken } from '../container/agent-token.js';
import { readConfigFile } from '../container/config-file.js';
import { createContainer } from '../container/create-container.js';
import type { SkeinConfig } from '../container/skein-config.js';
import { ConfigurationError, ForkUnsupportedError, HistoryPositionError, ServiceError, SkeinError, ThreadBusyError, ThreadCompatibilityError, SerializationError, NotFoundError } from '../errors/skein-error.js';
import { approvalResponse, type ChatMessage, messageText, textMessage } from '../messages/chat-message.js';
import { addUsage, type UsageDetails } from '../messages/content.js';
import { AccessToken } from '../http/access-token.js';
import { assertBindable, isLoopbackAddress, isWildcardAddress } from '../http/bind-address.js';
import { LocalRequestGuard, RequestRefusedError } from '../http/local-request-guard.js';
import { SERVICE_THREAD_TYPE, UNSTARTED_THREAD_TYPE, type AgentThread } from '../threads/agent-thread.js';
import { FAVICON_SVG } from './page/favicon.js';
import { PAGE_CSS } from './page/page-css.js';
import { PAGE_HTML } from './page/page-html.js';
import { describeDeletion, historyIdentity, storeKeyOf } from './thread-identity.js';
import { ThreadIndex, type ThreadIndexEntry } from './thread-index.js';
import type { TelemetryOptions } from '../telemetry/telemetry-middleware.js';
import type { telemetryPlugin } from '../telemetry/telemetry-plugin.js';
import { TurnTraces } from './turn-traces.js';

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

/** What the page lists for a thread. */
export interface ThreadSummary {
  id: string;
  agent: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  /** `service`: the service keeps the history; `store`: a message store does; `unstarted`: nothing yet. */
  kind: 'service' | 'store' | 'unstarted';
  /** The serialized `$type` (the store type for store threads). */
  type: string;
  serviceThreadId?: string;
  /** A durable store's key (sqlite, redis, postgres): the history the thread reads and writes. */
  storeKey?: string;
  /** Tool calls waiting for the user's approval (answer them with `approvals` on `/api/chat`). */
  pendingApprovals: number;
  /** Exactly what `DELETE` deletes: the title, and the store and key or the service thread. */
  deletion: string;
  /** With `?q=`: where the words were found (the title, or the messages with an excerpt). */
  match?: { in: 'title' } | { in: 'messages'; excerpt: string };
}

/** How `POST /api/threads/import` placed a file: a new entry, the entry already listed for its history, or a real copy. */
export type LoadOutcome = 'new' | 'existing' | 'copy';

/** A tool call waiting for the user's approval, as the page shows it. */
export interface PendingApproval {
  callId: string;
  name: string;
  arguments: string;
}

/** The user's answer to one pending approval, as `POST /api/chat` takes it. */
export interface ApprovalAnswer {
  callId: string;
  approved: boolean;
  reason?: string;
}

interface AgentInfo {
  name: string;
  displayName?: string;
  description?: string;
  client: string;
}

interface ActiveRun {
  threadId?: string;
  stop: () => void;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errorName = 'Error',
  ) {
    super(message);
  }
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

let lastStamp = 0;
/** ISO time that never repeats in this process, so "newest first" is exact even within one millisecond. */
function timestamp(): string {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return new Date(lastStamp).toISOString();
}
/** The page's scripts (compiled with the package), by the address the page loads them from. */
const PAGE_SCRIPTS = new Map([
  ['/app.js', new URL('./page/devui-client.js', import.meta.url)],
  ['/markdown.js', new URL('./page/markdown.js', import.meta.url)],
]);

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
  const app = new DevUIServer(container, agents, threads, guard, token, url, { collector: traces?.collector, captureContent });
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

/** What the Dev UI needs to keep turn traces: its collector, its provider, and the telemetry plugin's parts. */
interface TraceSetup {
  collector: TurnTraces;
  provider: TracerProvider;
  telemetryPlugin: typeof telemetryPlugin;
  pluginId: string;
  optionsToken: symbol;
}

/**
 * The Dev UI's own tracer provider with the turn-trace collector on it. The OpenTelemetry SDK and
 * Skein's telemetry module (which needs @opentelemetry/api) are optional peers, loaded only here:
 * without them the Dev UI runs, without traces — and the CLI that imports this file starts.
 */
async function traceCollector(): Promise<TraceSetup | undefined> {
  try {
    const [{ BasicTracerProvider }, plugin, middleware] = await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('../telemetry/telemetry-plugin.js'),
      import('../telemetry/telemetry-middleware.js'),
    ]);
    const collector = new TurnTraces();
    return {
      collector,
      provider: new BasicTracerProvider({ spanProcessors: [collector] }),
      telemetryPlugin: plugin.telemetryPlugin,
      pluginId: plugin.TELEMETRY_PLUGIN_ID,
      optionsToken: middleware.TelemetryOptions,
    };
  } catch {
    return undefined;
  }
}

async function loadAgents(
  config: string | SkeinConfig,
  env: NodeJS.ProcessEnv | undefined,
  traces: TraceSetup | undefined,
  captureContent: boolean | undefined,
): Promise<{ container: Container; agents: Map<string, AgentInfo>; captureContent: boolean }> {
  let resolved: SkeinConfig;
  if (typeof config === 'string') {
    // readConfigFile + createContainer(config) is what createContainer(file) does; it also gives us the agent names.
    const { config: fileConfig, problems } = await readConfigFile(config, env);
    if (problems.length) throw new ConfigurationError(problems);
    resolved = fileConfig;
  } else {
    resolved = config;
  }
  // Telemetry goes first (its spans wrap other middleware); a configured one is kept and pointed at the Dev UI's provider too.
  const configured = traces ? (resolved.plugins?.some((plugin) => plugin.id === traces.pluginId) ?? false) : false;
  if (traces && !configured) resolved = { ...resolved, plugins: [traces.telemetryPlugin(), ...(resolved.plugins ?? [])] };
  const container = createContainer(resolved);
  let capturing = false;
  if (traces && container.isBound(traces.optionsToken)) {
    const options = container.get<TelemetryOptions>(traces.optionsToken);
    capturing = captureContent ?? options.captureContent ?? process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.toLowerCase() === 'true';
    container.rebind<TelemetryOptions>(traces.optionsToken).toConstantValue({ ...options, tracerProvider: traces.provider, captureContent: capturing });
  }
  const agents = new Map<string, AgentInfo>();
  for (const [name, agentConfig] of Object.entries(resolved.agents ?? {})) {
    agents.set(name, { name, displayName: agentConfig.name, description: agentConfig.description, client: agentConfig.client });
  }
  return { container, agents, captureContent: capturing };
}

class DevUIServer {
  readonly #runs = new Map<string, ActiveRun>();
  readonly #busyThreads = new Set<string>();

  constructor(
    private readonly container: Container,
    private readonly agents: Map<string, AgentInfo>,
    private readonly index: ThreadIndex,
    private readonly guard: LocalRequestGuard,
    private readonly token: AccessToken | undefined,
    private readonly url: string,
    private readonly tracing: { collector: TurnTraces | undefined; captureContent: boolean },
  ) {}

  async close(server: Server): Promise<void> {
    for (const run of this.#runs.values()) run.stop();
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
      if (method === 'GET' && url.pathname === '/') return sendText(res, 200, 'text/html; charset=utf-8', PAGE_HTML);
      if (method === 'GET' && (url.pathname === '/favicon.svg' || url.pathname === '/favicon.ico')) return sendText(res, 200, 'image/svg+xml', FAVICON_SVG);
      if (method === 'GET' && url.pathname === '/app.css') return sendText(res, 200, 'text/css; charset=utf-8', PAGE_CSS);
      const script = method === 'GET' ? PAGE_SCRIPTS.get(url.pathname) : undefined;
      if (script) return sendText(res, 200, 'text/javascript; charset=utf-8', await readFile(script, 'utf8'));
      if (parts[0] !== 'api') throw new HttpError(404, `No page at ${url.pathname}.`);
      const [, resource, id, action] = parts;
      if (resource === 'session' && parts.length === 2 && method === 'POST') return await this.#startSession(req, res);
      const unauthorized = this.token?.check(req, `open the address the Dev UI printed when it started (${this.url}/?token=...), or send Authorization: Bearer <token>. Start it with --no-token to turn the check off.`);
      if (unauthorized) throw unauthorized;
      if (resource === 'agents' && parts.length === 2 && method === 'GET') return sendJson(res, 200, { agents: [...this.agents.values()] });
      if (resource === 'agents' && action === 'tools' && parts.length === 4 && method === 'GET') return await this.#listTools(res, id);
      if (resource === 'agents' && action === 'tools' && parts.length === 5 && method === 'POST') return await this.#runTool(req, res, id, parts[4]!);
      if (resource === 'chat' && parts.length === 2 && method === 'POST') return await this.#chat(req, res);
      if (resource === 'runs' && action === 'stop' && method === 'POST') return sendJson(res, 200, { stopped: this.#stop(id!) });
      if (resource === 'threads') {
        if (parts.length === 2 && method === 'GET') return sendJson(res, 200, { threads: await this.#summaries(url.searchParams) });
        if (id !== undefined && parts.length === 3 && method === 'PATCH') return await this.#rename(req, res, id);
        if (id === 'import' && parts.length === 3 && method === 'POST') return await this.#import(req, res);
        if (id !== undefined && parts.length === 3 && method === 'GET') return await this.#getThread(res, id);
        if (id !== undefined && action === 'json' && method === 'GET') return await this.#download(res, id);
        if (id !== undefined && action === 'traces' && method === 'GET') return await this.#traces(res, id);
        if (id !== undefined && action === 'fork' && method === 'POST') return await this.#fork(req, res, id);
        if (id !== undefined && parts.length === 3 && method === 'DELETE') return await this.#delete(res, id, url.searchParams.get('confirm') === '1');
      }
      throw new HttpError(404, `No API route ${method} ${url.pathname}.`);
    } catch (error) {
      if (res.headersSent) {
        res.end();
        return;
      }
      const { status, body } = describeError(error);
      sendJson(res, status, { error: body });
    }
  }

  /**
   * The page trades the token of the printed address for an HttpOnly, SameSite=Strict cookie, so
   * the token leaves the address bar and no script (and no other site) can read or send it.
   */
  async #startSession(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = asObject(await readJsonBody(req), 'The request body');
    if (!this.token) return sendJson(res, 200, { session: 'no-token' });
    if (!this.token.matches(body.token)) {
      throw new RequestRefusedError(401, 'token', `This address's token is not the Dev UI's: it makes a new one at each start. Open the address it printed last (${this.url}/?token=...).`);
    }
    res.setHeader('set-cookie', this.token.cookie());
    sendJson(res, 200, { session: 'started' });
  }

  /** Every entry's summary; entries left sharing one history (by an older Dev UI) name each other. */
  async #summaries(query: URLSearchParams): Promise<ThreadSummary[]> {
    const entries = await this.index.list();
    const agent = query.get('agent') || undefined;
    if (agent !== undefined && !this.agents.has(agent)) throw new HttpError(400, `Unknown agent ${JSON.stringify(agent)} in ?agent=; configured agents: ${[...this.agents.keys()].join(', ')}.`);
    const words = (query.get('q') ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const shown: ThreadSummary[] = [];
    for (const entry of entries) {
      if (agent !== undefined && entry.agent !== agent) continue;
      const summary = summarize(entry, sharingWith(entry, entries));
      if (words.length) {
        const match = await this.#match(entry, words);
        if (!match) continue;
        summary.match = match;
      }
      shown.push(summary);
    }
    return shown;
  }

  /**
   * Where a thread holds every search word: its title, else its messages (read from its store, or
   * the Dev UI's transcript for a service thread), with a short excerpt around the first word.
   */
  async #match(entry: ThreadIndexEntry, words: readonly string[]): Promise<ThreadSummary['match'] | undefined> {
    if (words.every((w) => entry.title.toLowerCase().includes(w))) return { in: 'title' };
    let messages: readonly ChatMessage[] = entry.transcript ?? [];
    if (!entry.transcript && entry.serialized.$type !== UNSTARTED_THREAD_TYPE) {
      // A thread whose agent or store is gone cannot be searched; it is simply not a match.
      const thread = await this.#agent(entry.agent).deserializeThread(entry.serialized).catch(() => undefined);
      messages = (await thread?.messageStore?.listMessages().catch(() => undefined)) ?? [];
    }
    const text = messages.map((m) => messageText(m)).join('\n');
    const lower = text.toLowerCase();
    if (!words.every((w) => lower.includes(w) || entry.title.toLowerCase().includes(w))) return undefined;
    const at = Math.max(0, ...words.map((w) => lower.indexOf(w)).filter((i) => i >= 0).slice(0, 1));
    const start = Math.max(0, at - 30);
    return { in: 'messages', excerpt: `${start > 0 ? '…' : ''}${text.slice(start, at + 60).replace(/\s+/g, ' ').trim()}${at + 60 < text.length ? '…' : ''}` };
  }

  /**
   * Forks a thread at one of its messages (`agent.forkThread`): a new, independent entry holding
   * the history up to and including that message; the original is untouched.
   */
  async #fork(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const body = asObject(await readJsonBody(req), 'The request body');
    if (typeof body.at !== 'number' || !Number.isInteger(body.at) || body.at < 0) {
      throw new HttpError(400, `"at" must be the index of a message of the thread (0 is the first); got ${JSON.stringify(body.at)}.`);
    }
    const entry = await this.#entry(id);
    if (this.#busyThreads.has(id)) throw new HttpError(409, 'This thread is running a turn; fork it when the turn ends.', 'ThreadBusyError');
    const agent = this.#agent(entry.agent);
    const fork = await agent.forkThread(await agent.deserializeThread(entry.serialized), { at: body.at });
    const now = timestamp();
    const forked: ThreadIndexEntry = {
      id: ThreadIndex.newId(),
      agent: entry.agent,
      title: `${entry.title} (fork at message ${body.at + 1})`,
      createdAt: now,
      updatedAt: now,
      serialized: await fork.serialize(),
    };
    setPendingCount(forked, fork);
    // A service keeps the fork's history; the Dev UI shows it as the service returns it.
    if (!fork.messageStore) forked.transcript = await agent.getMessages(fork).catch(() => []);
    await this.index.put(forked);
    sendJson(res, 201, { thread: summarize(forked) });
  }

  /** Renames a thread (the Dev UI's title; the history is untouched). */
  async #rename(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const body = asObject(await readJsonBody(req), 'The request body');
    const title = typeof body.title === 'string' ? body.title.trim().replace(/\s+/g, ' ') : undefined;
    if (!title || title.length > 200) {
      throw new HttpError(400, `"title" must be a non-empty string of at most 200 characters; got ${typeof body.title === 'string' ? `${body.title.trim().length} characters` : JSON.stringify(body.title)}.`);
    }
    const entry = await this.#entry(id);
    if (this.#busyThreads.has(id)) throw new HttpError(409, 'This thread is running a turn; rename it when the turn ends.', 'ThreadBusyError');
    const renamed = { ...entry, title };
    await this.index.put(renamed);
    sendJson(res, 200, { thread: summarize(renamed) });
  }

  #agent(name: unknown): AIAgent {
    if (typeof name !== 'string' || !this.agents.has(name)) {
      throw new HttpError(400, `Unknown agent ${JSON.stringify(name)}; configured agents: ${[...this.agents.keys()].join(', ') || 'none'}.`);
    }
    return this.container.get(agentToken(name));
  }

  /**
   * The agent's tools: its own, then those its tool sets (MCP servers) list now. Other agents'
   * tools run on their service. A set that cannot be listed (a server that is down) is reported
   * beside the tools that could be, never hiding them.
   */
  async #tools(agentName: string | undefined, signal?: AbortSignal): Promise<{ tools: AITool[]; toolSetErrors: ToolSetError[] }> {
    const agent = this.#agent(agentName);
    if (!(agent instanceof ChatAgent)) return { tools: [], toolSetErrors: [] };
    const tools = agent.tools;
    const toolSetErrors: ToolSetError[] = [];
    const listed = await Promise.all(
      agent.toolSets.map((set) =>
        set.listTools(signal).catch((error: unknown) => {
          const { body } = describeError(error);
          toolSetErrors.push({ toolSet: set.name, name: body.name, message: body.message });
          return [];
        }),
      ),
    );
    return { tools: [...tools, ...listed.flat()], toolSetErrors };
  }

  async #listTools(res: ServerResponse, agentName: string | undefined): Promise<void> {
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const { tools, toolSetErrors } = await this.#tools(agentName, controller.signal);
    sendJson(res, 200, { tools: tools.map(describeTool), ...(toolSetErrors.length ? { toolSetErrors } : {}) });
  }

  /**
   * Runs one of the agent's tools by hand, outside any conversation: no thread, no model. Through
   * the approval gate like every other path: a tool that needs approval runs only when the request
   * says `"approved": true` (the page's "I approve" box); `false` answers it as rejected.
   */
  async #runTool(req: IncomingMessage, res: ServerResponse, agentName: string | undefined, toolName: string): Promise<void> {
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const { tools, toolSetErrors } = await this.#tools(agentName, controller.signal);
    const tool = tools.find((t) => t.declaration.name === toolName);
    if (!tool) {
      // The tool may belong to a server that could not be listed: that is the server's failure, not a wrong name.
      const failed = toolSetErrors.map((e) => `${e.toolSet} (${e.name}: ${e.message})`).join('; ');
      if (failed) throw new HttpError(502, `Agent "${agentName}" has no tool "${toolName}" among those it could list (${tools.map((t) => t.declaration.name).join(', ') || 'none'}); these tool sets could not be listed: ${failed}`, 'ToolSetUnavailableError');
      throw new HttpError(404, `Agent "${agentName}" has no tool "${toolName}"; its tools: ${tools.map((t) => t.declaration.name).join(', ') || 'none'}.`, 'NotFoundError');
    }
    const body = asObject(await readJsonBody(req), 'The request body');
    const args = body.arguments ?? {};
    asObject(args, '"arguments"');
    if (body.approved !== undefined && typeof body.approved !== 'boolean') throw new HttpError(400, `"approved" must be true or false; found ${JSON.stringify(body.approved)}.`);
    const started = performance.now();
    const call = { kind: 'function-call' as const, callId: `devui_${randomUUID()}`, name: toolName, arguments: JSON.stringify(args) };
    const approval = typeof body.approved === 'boolean' ? { kind: 'function-approval-response' as const, callId: call.callId, approved: body.approved } : undefined;
    let outcome: Awaited<ReturnType<AITool['invoke']>>;
    try {
      outcome = await runToolCall({ call, tool, approval, invoke: () => tool.invoke({ signal: controller.signal, call }) });
    } catch (error) {
      if (error instanceof ToolApprovalRequiredError) {
        throw new HttpError(409, `Tool "${toolName}" needs the user's approval; it was not run. Send "approved": true (the "I approve" box) to run it by hand.`, error.name);
      }
      // A tool reports its own failures as an error result; a throw is its server failing
      // (an MCP server that died or timed out): a bad gateway, not a Dev UI fault.
      if (error instanceof SkeinError) throw new HttpError(502, error.message, error.constructor.name);
      throw error;
    }
    const reply: { tool: string; arguments: unknown; durationMs: number; result?: unknown; error?: string } = { tool: toolName, arguments: args, durationMs: Math.round((performance.now() - started) * 100) / 100 };
    if (outcome.error !== undefined) reply.error = outcome.error;
    else reply.result = outcome.result ?? null;
    sendJson(res, 200, reply);
  }

  async #entry(id: string): Promise<ThreadIndexEntry> {
    const entry = await this.index.get(id);
    if (!entry) throw new HttpError(404, `No thread "${id}" in the Dev UI's thread index (${this.index.directory}).`);
    return entry;
  }

  async #getThread(res: ServerResponse, id: string): Promise<void> {
    const entry = await this.#entry(id);
    const agent = this.#agent(entry.agent);
    const thread = await agent.deserializeThread(entry.serialized);
    const messages = thread.messageStore ? await thread.messageStore.listMessages() : (entry.transcript ?? []);
    sendJson(res, 200, {
      thread: summarize(entry),
      history: thread.messageStore ? 'store' : 'transcript',
      messages: messages.map(viewMessage),
      pendingApprovals: pendingOf(thread),
    });
  }

  /** The traces of the thread's turns taken in this session (kept in memory, never sent elsewhere). */
  async #traces(res: ServerResponse, id: string): Promise<void> {
    await this.#entry(id);
    const { collector, captureContent } = this.tracing;
    sendJson(res, 200, { enabled: collector !== undefined, captureContent, traces: collector?.forThread(id) ?? [] });
  }

  async #download(res: ServerResponse, id: string): Promise<void> {
    const entry = await this.#entry(id);
    const fileName = `skein-thread-${entry.agent}-${entry.id}.json`.replace(/[^A-Za-z0-9._-]/g, '_');
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="${fileName}"`,
      'cache-control': 'no-store',
    });
    res.end(JSON.stringify(entry.serialized, undefined, 2));
  }

  /**
   * Loads a serialized thread (a downloaded file), checked by the agent that will continue it.
   * A file whose history is already listed (same durable store key or service thread) never
   * becomes a second entry on that history: the listed entry is returned (`existing`), unless
   * `as: "copy"` asks for a real copy (a new store key holding a copy of the messages).
   */
  async #import(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = asObject(await readJsonBody(req), 'The request body');
    if (body.as !== undefined && body.as !== 'copy') throw new HttpError(400, `"as" must be "copy" (to load a real copy) or absent; got ${JSON.stringify(body.as)}.`);
    const serialized = body.serialized;
    const agentName = typeof body.agent === 'string' && body.agent ? body.agent : this.#agentFor(serialized);
    const agent = this.#agent(agentName);
    const loaded = await agent.deserializeThread(serialized);
    const identity = historyIdentity(await loaded.serialize());
    if (body.as !== 'copy' && identity !== undefined) {
      const listed = (await this.index.list()).find((entry) => historyIdentity(entry.serialized) === identity);
      if (listed) {
        const summary = summarize(listed);
        const message = `This thread is already listed as "${listed.title}" (${summary.kind === 'service' ? `service thread ${summary.serviceThreadId}` : `${summary.type} store, key ${summary.storeKey}`}); opened it instead of adding a second entry on the same history. Load it as a copy to get an independent thread.`;
        return sendJson(res, 200, { thread: summary, loaded: 'existing' satisfies LoadOutcome, message });
      }
    }
    const copy = body.as === 'copy' && identity !== undefined;
    const thread = copy ? await copyThread(agent, loaded) : loaded;
    const now = timestamp();
    const messages = thread.messageStore ? await thread.messageStore.listMessages() : [];
    const title = titleOf(messages) ?? (thread.serviceThreadId ? `Service thread ${thread.serviceThreadId}` : 'Loaded thread');
    const entry: ThreadIndexEntry = {
      id: ThreadIndex.newId(),
      agent: agentName,
      title: copy ? `${title} (copy)` : title,
      createdAt: now,
      updatedAt: now,
      serialized: await thread.serialize(),
    };
    setPendingCount(entry, thread);
    if (!thread.messageStore) entry.transcript = [];
    await this.index.put(entry);
    const summary = summarize(entry);
    const message = copy
      ? `Loaded as a copy: ${messages.length} messages copied to a new ${summary.type} store key (${summary.storeKey}); the original is unchanged.`
      : `Loaded as a new thread.`;
    sendJson(res, 201, { thread: summary, loaded: (copy ? 'copy' : 'new') satisfies LoadOutcome, message });
  }

  /** The configured agent a serialized thread names (by config key or agent name). */
  #agentFor(serialized: unknown): string {
    const named = serialized && typeof serialized === 'object' ? (serialized as { agent?: unknown }).agent : undefined;
    if (typeof named === 'string') {
      if (this.agents.has(named)) return named;
      for (const info of this.agents.values()) if (info.displayName === named) return info.name;
    }
    throw new HttpError(400, `Pick the agent to continue this thread with: the file names agent ${JSON.stringify(named)}, which is not configured.`);
  }

  /**
   * Deletes what `deletion` says: the history (store or service) and the entry. When another
   * entry uses the same history (left by an older Dev UI), only this entry goes.
   */
  async #delete(res: ServerResponse, id: string, confirmed: boolean): Promise<void> {
    const entry = await this.#entry(id);
    if (this.#busyThreads.has(id)) throw new HttpError(409, 'This thread is running a turn; stop it before deleting it.', 'ThreadBusyError');
    const service = entry.serialized.$type === SERVICE_THREAD_TYPE;
    const shared = sharingWith(entry, await this.index.list());
    const deletion = describeDeletion(entry.title, entry.serialized, shared);
    if (service && !confirmed) {
      throw new HttpError(409, `Thread "${entry.title}" is kept by the service; confirm to delete it there too (add ?confirm=1). ${deletion}`);
    }
    if (entry.serialized.$type !== UNSTARTED_THREAD_TYPE && shared.length === 0) {
      const agent = this.#agent(entry.agent);
      await agent.deleteThread(await agent.deserializeThread(entry.serialized));
    }
    await this.index.delete(id);
    this.tracing.collector?.forget(id);
    sendJson(res, 200, { deleted: true, service, historyKept: shared.length > 0, deletion });
  }

  #stop(runId: string): boolean {
    const run = this.#runs.get(runId);
    if (!run) return false;
    run.stop();
    return true;
  }

  /**
   * Runs one turn and relays it as server-sent events; the thread is saved only when the turn
   * completes. The turn's input is the typed text, the answers to pending approvals, or both.
   */
  async #chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = asObject(await readJsonBody(req), 'The request body');
    const answers = parseApprovals(body.approvals);
    const text = typeof body.text === 'string' && body.text.trim() !== '' ? body.text : undefined;
    if (body.text !== undefined && typeof body.text !== 'string') throw new HttpError(400, '"text" must be a string.');
    if (text === undefined && answers.length === 0) throw new HttpError(400, 'Type a message to send.');
    const threadId = typeof body.threadId === 'string' && body.threadId ? body.threadId : undefined;
    if (answers.length && threadId === undefined) throw new HttpError(400, 'Approvals answer the tool calls of a thread: give its "threadId".');
    const existing = threadId === undefined ? undefined : await this.#entry(threadId);
    if (existing && body.agent !== undefined && body.agent !== existing.agent) {
      throw new HttpError(400, `Thread "${existing.title}" belongs to agent "${existing.agent}", not "${String(body.agent)}".`, 'ThreadCompatibilityError');
    }
    const agentName = existing?.agent ?? (body.agent as string);
    const agent = this.#agent(agentName);
    const settings = parseRunSettings(body.settings, agent, agentName);
    if (threadId !== undefined && this.#busyThreads.has(threadId)) {
      throw new HttpError(409, 'This thread is already running a turn; wait for it or stop it.', 'ThreadBusyError');
    }
    const thread = existing ? await agent.deserializeThread(existing.serialized) : agent.getNewThread();
    // Checked before the stream starts, so a stale answer (another tab answered first) is a plain 409, not a failed turn.
    const pending = waitingApprovalsOf(thread);
    for (const answer of answers) {
      if (!pending.some((call) => call.callId === answer.callId)) {
        const waiting = pending.map((call) => `${call.name} (${call.callId})`).join(', ') || 'none';
        throw new HttpError(409, `Tool call ${answer.callId} is not waiting for approval on this thread (waiting: ${waiting}); it may have been answered already.`, 'SkeinError');
      }
    }
    const input: ChatMessage[] = answers.map((a) => approvalResponse(a, a.approved, a.reason));
    if (text !== undefined) input.push(textMessage('user', text));

    const runId = randomUUID();
    const sse = new SseWriter(res);
    const updates: AgentRunResponseUpdate[] = [];
    let usage: UsageDetails | undefined;
    let finished = false;
    // Once the stream completed the turn is being saved: a late stop must not report "unchanged".
    let completed = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.#runs.delete(runId);
      if (threadId !== undefined) this.#busyThreads.delete(threadId);
      sse.end();
    };
    const collector = this.tracing.collector;
    const stop = () => {
      if (finished || completed) return;
      subscription.unsubscribe();
      sse.send('stopped', { message: 'Stopped. The thread is unchanged.' });
      finish();
      // A stopped turn saves nothing, so it keeps no trace.
      collector?.discard(runId);
      // The aborted run unwinds after this; if the agent kept results of approved tools that
      // already ran, save them once it let go of the thread, so they can never run twice.
      void whenIdle(thread).then(() => this.#keepWhatTheAgentKept(thread, agentName, existing, input, updates)).catch(() => undefined);
    };
    this.#runs.set(runId, { threadId, stop });
    if (threadId !== undefined) this.#busyThreads.add(threadId);
    // The browser went away (tab closed, fetch aborted): abort the run like the stop button does.
    res.on('close', () => {
      if (!finished) {
        subscription.unsubscribe();
        finish();
      }
    });
    sse.send('run', { runId, threadId, agent: agentName, ...(settings ? { settings } : {}) });

    const observer: Partial<Observer<AgentRunResponseUpdate>> = {
      next: (update) => {
        updates.push(update);
        for (const content of update.contents) {
          switch (content.kind) {
            case 'text':
              if (content.text) sse.send('delta', { text: content.text, role: update.role, authorName: update.authorName });
              break;
            case 'function-call':
              collector?.noteTool(runId, content.callId, { arguments: content.arguments });
              sse.send('tool-call', { callId: content.callId, name: content.name, arguments: content.arguments, authorName: update.authorName });
              break;
            case 'function-result':
              collector?.noteTool(runId, content.callId, { result: content.error !== undefined ? `Error: ${content.error}` : JSON.stringify(content.result ?? null) });
              sse.send('tool-result', { callId: content.callId, result: content.result, error: content.error });
              break;
            case 'hosted-mcp-call':
              // The service made this call on a hosted MCP server: a call and its result, like a local one, naming the server.
              collector?.noteTool(runId, content.callId, { arguments: content.arguments, result: content.error !== undefined ? `Error: ${content.error}` : JSON.stringify(content.result ?? null) });
              sse.send('tool-call', { callId: content.callId, name: content.name, arguments: content.arguments, authorName: update.authorName, hostedServer: content.serverLabel });
              sse.send('tool-result', { callId: content.callId, result: content.result, error: content.error });
              break;
            case 'function-approval-request':
              sse.send('approval-request', { callId: content.callId, name: content.name, arguments: content.arguments });
              break;
            case 'usage':
              usage = addUsage(usage, content.usage);
              break;
            case 'error':
              sse.send('notice', { message: content.message });
              break;
            default:
              break;
          }
        }
      },
      error: (error: unknown) => {
        if (finished) return;
        // The core may keep part of a failed turn (results of tools the user approved, which
        // already ran): save that, so answering again can never run a tool twice.
        void this.#keepWhatTheAgentKept(thread, agentName, existing, input, updates)
          .then(async (entry) => {
            // A failed turn on a listed thread keeps its trace: the error is what the user wants to see.
            await this.#sendTrace(sse, runId, entry?.id ?? threadId);
            sse.send('error', { ...describeError(error).body, ...(entry ? { thread: summarize(entry), pendingApprovals: pendingOf(thread) } : {}) });
          })
          .catch(() => sse.send('error', describeError(error).body))
          .finally(finish);
      },
      complete: () => {
        completed = true;
        void this.#commit(thread, agentName, existing, input, updates)
          .then(async (entry) => {
            await this.#sendTrace(sse, runId, entry.id);
            sse.send('usage', { usage: usage ?? {} });
            sse.send('done', { thread: summarize(entry), usage: usage ?? {}, pendingApprovals: pendingOf(thread) });
          })
          .catch((error: unknown) => sse.send('error', describeError(error).body))
          .finally(finish);
      },
    };
    // stop() and the close handler run only after subscribe() has returned (both are async events).
    const chatOptions = settings ? chatOptionsOf(settings, agent) : undefined;
    const subscribe = () => agent.runStream(input, { thread, ...(chatOptions ? { chatOptions } : {}) }).subscribe(observer);
    const subscription: Subscription = collector ? collector.inRun(runId, settings ? { ...settings } : undefined, subscribe) : subscribe();
  }

  /** Files the run's trace under its thread and sends it to the page (after its last span ended); a run on no thread keeps none. */
  async #sendTrace(sse: SseWriter, runId: string, threadId: string | undefined): Promise<void> {
    const collector = this.tracing.collector;
    if (!collector) return;
    if (threadId === undefined) return collector.discard(runId);
    collector.assign(runId, threadId);
    await collector.settled(runId);
    const trace = collector.forThread(threadId).find((t) => t.runId === runId);
    if (trace) sse.send('trace', { trace, captureContent: this.tracing.captureContent });
  }

  /** Saves a failed turn's thread only when the agent changed it (it kept settled approvals). */
  async #keepWhatTheAgentKept(
    thread: AgentThread,
    agentName: string,
    existing: ThreadIndexEntry | undefined,
    input: readonly ChatMessage[],
    updates: AgentRunResponseUpdate[],
  ): Promise<ThreadIndexEntry | undefined> {
    if (!existing) return undefined;
    if (JSON.stringify(await thread.serialize()) === JSON.stringify(existing.serialized)) return undefined;
    return this.#commit(thread, agentName, existing, input, updates);
  }

  async #commit(thread: AgentThread, agentName: string, existing: ThreadIndexEntry | undefined, input: readonly ChatMessage[], updates: AgentRunResponseUpdate[]): Promise<ThreadIndexEntry> {
    const now = timestamp();
    const entry: ThreadIndexEntry = existing
      ? { ...existing, updatedAt: now, serialized: await thread.serialize() }
      : { id: ThreadIndex.newId(), agent: agentName, title: titleOf(input) ?? 'New thread', createdAt: now, updatedAt: now, serialized: await thread.serialize() };
    setPendingCount(entry, thread);
    if (thread.messageStore) {
      delete entry.transcript;
    } else {
      const produced = responseFromUpdates(updates.map((u) => ({ ...u, role: u.role ?? 'assistant' })))
        .messages.map((m) => withAuthor(m, updates))
        .map((m) => (m.createdAt ? m : { ...m, createdAt: now }));
      // The user's side of the turn as one message: approval answers first, then the typed text.
      const sent: ChatMessage = { role: 'user', contents: input.flatMap((m) => m.contents), createdAt: now };
      entry.transcript = [...(existing?.transcript ?? []), sent, ...produced];
    }
    await this.index.put(entry);
    return entry;
  }
}

/** Settings for one run, as the page sends them with a turn (`settings` on `POST /api/chat`). */
export interface RunSettings {
  temperature?: number;
  maxOutputTokens?: number;
  model?: string;
  /** Added after the agent's own instructions for this run only. */
  instructions?: string;
}

/** Checks `settings` of a chat request; only agents that build their own model requests (ChatAgent) take them. */
function parseRunSettings(value: unknown, agent: AIAgent, agentName: string): RunSettings | undefined {
  if (value === undefined || value === null) return undefined;
  const raw = asObject(value, '"settings"');
  const settings: RunSettings = {};
  for (const key of Object.keys(raw)) {
    if (!['temperature', 'maxOutputTokens', 'model', 'instructions'].includes(key)) {
      throw new HttpError(400, `settings.${key} is not a run setting; expected temperature, maxOutputTokens, model or instructions.`);
    }
  }
  if (raw.temperature !== undefined) {
    if (typeof raw.temperature !== 'number' || !(raw.temperature >= 0 && raw.temperature <= 2)) {
      throw new HttpError(400, `settings.temperature must be a number from 0 to 2; got ${JSON.stringify(raw.temperature)}.`);
    }
    settings.temperature = raw.temperature;
  }
  if (raw.maxOutputTokens !== undefined) {
    if (typeof raw.maxOutputTokens !== 'number' || !Number.isInteger(raw.maxOutputTokens) || raw.maxOutputTokens < 1) {
      throw new HttpError(400, `settings.maxOutputTokens must be a whole number of at least 1; got ${JSON.stringify(raw.maxOutputTokens)}.`);
    }
    settings.maxOutputTokens = raw.maxOutputTokens;
  }
  for (const key of ['model', 'instructions'] as const) {
    const text = raw[key];
    if (text === undefined) continue;
    if (typeof text !== 'string') throw new HttpError(400, `settings.${key} must be a string; got ${JSON.stringify(text)}.`);
    if (text.trim()) settings[key] = text.trim();
  }
  if (!Object.keys(settings).length) return undefined;
  if (!(agent instanceof ChatAgent)) {
    throw new HttpError(400, `Agent "${agentName}" runs on a service that sets its own model options; run settings apply to agents with a chat client (openai-chat, openai-responses). Send the turn without settings.`);
  }
  return settings;
}

/** The run's chat options: extra instructions go after the agent's own, the rest as given. */
function chatOptionsOf(settings: RunSettings, agent: AIAgent): ChatOptions {
  const { instructions, ...options } = settings;
  const own = agent instanceof ChatAgent ? agent.instructions : undefined;
  return instructions ? { ...options, instructions: own ? `${own}\n\n${instructions}` : instructions } : options;
}

/** A tool set (an MCP server) whose tools could not be listed, and why. */
interface ToolSetError {
  toolSet: string;
  name: string;
  message: string;
}

/** What the page needs to build a tool's form, and where the tool runs (an MCP server's name). */
function describeTool(tool: AITool): { name: string; description?: string; parameters: unknown; requiresApproval: boolean; source?: ToolSource } {
  const { name, description, parameters } = tool.declaration;
  const source = tool.source ? { ...tool.source } : undefined;
  return { name, ...(description ? { description } : {}), parameters, requiresApproval: tool.requiresApproval === true, ...(source ? { source } : {}) };
}

function pendingOf(thread: AgentThread): PendingApproval[] {
  return waitingApprovalsOf(thread).map(({ callId, name, arguments: args }) => ({ callId, name, arguments: args }));
}

function setPendingCount(entry: ThreadIndexEntry, thread: AgentThread): void {
  const count = waitingApprovalsOf(thread).length;
  if (count) entry.pendingApprovals = count;
  else delete entry.pendingApprovals;
}

/** `approvals` of a chat request: `[{callId, approved, reason?}]`, each call answered once. */
function parseApprovals(value: unknown): ApprovalAnswer[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new HttpError(400, '"approvals" must be an array of {callId, approved, reason?}.');
  const seen = new Set<string>();
  return value.map((item: unknown, i) => {
    const answer = asObject(item, `approvals[${i}]`);
    if (typeof answer.callId !== 'string' || answer.callId === '') throw new HttpError(400, `approvals[${i}].callId must be the id of a pending tool call.`);
    if (typeof answer.approved !== 'boolean') throw new HttpError(400, `approvals[${i}].approved must be true or false.`);
    if (answer.reason !== undefined && typeof answer.reason !== 'string') throw new HttpError(400, `approvals[${i}].reason must be a string.`);
    if (seen.has(answer.callId)) throw new HttpError(400, `Tool call ${answer.callId} is answered twice.`);
    seen.add(answer.callId);
    const parsed: ApprovalAnswer = { callId: answer.callId, approved: answer.approved };
    const reason = typeof answer.reason === 'string' ? answer.reason.trim() : '';
    if (reason) parsed.reason = reason;
    return parsed;
  });
}

function withAuthor(message: ChatMessage, updates: readonly AgentRunResponseUpdate[]): ChatMessage {
  if (message.role !== 'assistant' || message.authorName) return message;
  const author = updates.find((u) => u.authorName)?.authorName;
  return author ? { ...message, authorName: author } : message;
}

/**
 * A real copy of a thread: a new thread of the same agent (a new store key), the messages and
 * the state (pending approvals) copied. A service thread cannot be copied this way: the service
 * keeps its history and Skein has no generic way to clone it there.
 */
async function copyThread(agent: AIAgent, original: AgentThread): Promise<AgentThread> {
  const copy = agent.getNewThread();
  if (!original.messageStore || copy.messageStore?.type !== original.messageStore.type) {
    const what = original.serviceThreadId ? `service thread ${original.serviceThreadId}` : 'this thread';
    throw new HttpError(409, `Cannot load ${what} as a copy: its history is kept by the service, which has no copy operation. Open the listed entry instead.`, 'ThreadCompatibilityError');
  }
  await copy.messageStore.addMessages(await original.messageStore.listMessages());
  copy.state = structuredClone(original.state);
  return copy;
}

/** Titles of the other entries on the same history as `entry` (none unless an older Dev UI made them). */
function sharingWith(entry: ThreadIndexEntry, entries: readonly ThreadIndexEntry[]): string[] {
  const identity = historyIdentity(entry.serialized);
  if (identity === undefined) return [];
  return entries.filter((other) => other.id !== entry.id && historyIdentity(other.serialized) === identity).map((other) => other.title);
}

function summarize(entry: ThreadIndexEntry, sharedWith: readonly string[] = []): ThreadSummary {
  const type = entry.serialized.$type;
  const summary: ThreadSummary = {
    id: entry.id,
    agent: entry.agent,
    title: entry.title,
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
    kind: type === SERVICE_THREAD_TYPE ? 'service' : type === UNSTARTED_THREAD_TYPE ? 'unstarted' : 'store',
    type,
    pendingApprovals: entry.pendingApprovals ?? 0,
    deletion: describeDeletion(entry.title, entry.serialized, sharedWith),
  };
  if (entry.serialized.serviceThreadId !== undefined) summary.serviceThreadId = entry.serialized.serviceThreadId;
  const storeKey = storeKeyOf(entry.serialized);
  if (storeKey !== undefined) summary.storeKey = storeKey;
  return summary;
}

function viewMessage(message: ChatMessage): Pick<ChatMessage, 'role' | 'authorName' | 'contents' | 'createdAt'> {
  const view: Pick<ChatMessage, 'role' | 'authorName' | 'contents' | 'createdAt'> = { role: message.role, contents: message.contents };
  if (message.authorName !== undefined) view.authorName = message.authorName;
  if (message.createdAt !== undefined) view.createdAt = message.createdAt;
  return view;
}

function titleOf(messages: readonly ChatMessage[]): string | undefined {
  const first = messages.find((m) => m.role === 'user' && messageText(m).trim());
  if (!first) return undefined;
  const text = messageText(first).trim().replace(/\s+/g, ' ');
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Resolves once no run holds the thread (polled: a thread has no event for it), or after 10 s. */
async function whenIdle(thread: AgentThread): Promise<void> {
  for (let waited = 0; thread.busy && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** A readable error for the page: the type a caller would catch, the message, and the service's status. */
function describeError(error: unknown): { status: number; body: { name: string; message: string; status?: number; requestId?: string } } {
  if (error instanceof HttpError) return { status: error.status, body: { name: error.errorName, message: error.message } };
  if (error instanceof RequestRefusedError) return { status: error.status, body: { name: error.name, message: error.message } };
  if (error instanceof SkeinError) {
    const body: { name: string; message: string; status?: number; requestId?: string } = { name: error.constructor.name, message: error.message };
    if (error instanceof ServiceError) {
      if (error.status !== undefined) body.status = error.status;
      if (error.requestId !== undefined) body.requestId = error.requestId;
    }
    const status =
      error instanceof SerializationError || error instanceof ThreadCompatibilityError || error instanceof HistoryPositionError
        ? 400
        : error instanceof ForkUnsupportedError
          ? 409
        : error instanceof ThreadBusyError
          ? 409
          : error instanceof NotFoundError
            ? 404
            : error instanceof ServiceError
              ? 502
              : 500;
    return { status, body };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, body: { name: error instanceof Error ? error.constructor.name : 'Error', message } };
}

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new HttpError(400, `${what} must be a JSON object.`);
  return value as Record<string, unknown>;
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `The request body is not valid JSON: ${(error as Error).message}.`, 'SerializationError');
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendText(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

/** No other site may frame the page (clickjacking), and the token in its address never leaves in a Referer. */
const PAGE_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'content-security-policy': "frame-ancestors 'none'", 'referrer-policy': 'no-referrer' };

function sendText(res: ServerResponse, status: number, contentType: string, text: string): void {
  res.writeHead(status, { 'content-type': contentType, ...PAGE_HEADERS });
  res.end(text);
}

/** Server-sent events on one response. */
class SseWriter {
  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.flushHeaders();
  }

  send(event: string, data: unknown): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    this.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }
}
