import type { BaseEvent, RunAgentInput } from '@ag-ui/core';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AIAgent, ALLOWED_HOSTS_ENV, ConfigurationError, type ThreadConcurrency, LocalRequestGuard, RequestBodyTooLargeError, SerialByKey, readRequestBody, allowedHostsFromEnv, assertBindable, sendRefusal } from 'skein';
import { type AgUiContextInstructions, type AgUiForwardedProps, defaultAgUiContextInstructions } from './ag-ui-context.js';
import { AgUiRequestError } from './ag-ui-errors.js';
import type { AgUiDurable } from './ag-ui-durable.js';
import type { AgUiPredictState } from './ag-ui-predict-state.js';
import { EventEncoder, MessageSchema, RunAgentInputSchema } from './ag-ui-peers.js';
import { type AgUiServerLogger, AgUiRunner, type PreparedRun, defaultAgUiServerLogger } from './ag-ui-runner.js';
import { type AgUiThreadStore, InMemoryAgUiThreadStore } from './ag-ui-thread-store.js';

/** Turns a request into the user it comes from; `undefined` (or a throw) answers HTTP 401. */
export type AgUiAuthenticate = (request: IncomingMessage) => Promise<string | undefined> | string | undefined;

export interface AgUiServerOptions {
  /**
   * The agents served, by name: each at `POST <basePath>/<name>`. A single agent may be given as
   * `agent`, served at `<basePath>` itself.
   */
  agents?: Record<string, AIAgent | AgUiServedAgent>;
  agent?: AIAgent;
  /** Predictive state updates for `agent` (with `agents`, give each its own: `{ agent, predictState }`). */
  predictState?: readonly AgUiPredictState[];
  /** Path prefix; default `/agents` with `agents`, `/` with `agent`. */
  basePath?: string;
  /** Where each threadId's record is kept; in memory by default (FileAgUiThreadStore keeps them on disk). */
  threads?: AgUiThreadStore;
  /**
   * Authentication: the user a request comes from. Every thread is owned by the user who created
   * it; anyone else gets not-found. Without it the server is open and all callers share one
   * owner (it says so once).
   */
  authenticate?: AgUiAuthenticate;
  /**
   * Origins (`https://app.example.com`) whose pages may call the server (CORS). No others: a
   * preflight from any other origin is refused and no CORS header is sent.
   */
  corsOrigins?: readonly string[];
  /** Hosts (`name` or `name:port`) accepted in `Host` besides loopback, when `listen` serves (with `SKEIN_ALLOWED_HOSTS`). */
  allowedHosts?: readonly string[];
  /** Largest request body accepted (default 4 MiB): a larger one is answered 413. */
  maxBodyBytes?: number;
  /**
   * How a run's `context` items reach the agent: as instructions for that run only
   * (`AgentRunOptions.additionalInstructions`), never stored in the thread. Default
   * `defaultAgUiContextInstructions` (one `- description: value` line each); `false` ignores them.
   */
  contextInstructions?: AgUiContextInstructions;
  /**
   * What a run's `forwardedProps` may set for that run (model options, extra instructions); a
   * throw answers 400. Without it `forwardedProps` is validated and not used. See docs/ag-ui.md.
   */
  forwardedProps?: AgUiForwardedProps;
  /** Keep what a run produced before the client disconnected or it failed (see AgentRunOptions.keepPartial). */
  keepPartial?: boolean;
  /**
   * A run on a thread that already runs one here: `queue` (default) waits for it; `reject` answers
   * 409 at once. (Across instances, the thread store's version check decides.)
   */
  concurrency?: ThreadConcurrency;
  logger?: AgUiServerLogger;
}

/** An agent served with options of its own. */
export interface AgUiServedAgent {
  agent: AIAgent;
  /**
   * Predictive state updates: while the model streams a call to `tool`, its argument
   * `toolArgument` is streamed into the shared state's `stateKey` (STATE_DELTA), announced by a
   * CUSTOM `PredictState` event at the start of each run; a call that succeeds leaves the value
   * in the thread's state (unless its tool wrote that key itself). See docs/ag-ui.md.
   */
  predictState?: readonly AgUiPredictState[];
  /**
   * Run the agent durably (docs/durable.md): `{ agent: durableAgent, runner }`, where
   * `durableAgent.agent` is `agent`. Each AG-UI run is `durableAgent.start(...)` with the
   * client's `runId`, streamed from `runner.runStream`; it goes on when the client leaves, and
   * the client reads the rest by sending the same `runId` with no new messages. See docs/ag-ui.md.
   */
  durable?: AgUiDurable;
}

export interface AgUiListenOptions {
  /** Listen on a non-loopback host on purpose. */
  expose?: boolean;
  /** Answers requests for other paths (after the request guard), e.g. the static files of your page. */
  fallback?: (request: IncomingMessage, response: ServerResponse) => void;
}

const DEFAULT_MAX_BODY = 4 * 1024 * 1024;
const AGENT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Serves Skein agents over AG-UI: each agent answers `POST` with a `RunAgentInput` and streams
 * the run as AG-UI events (SSE, or protobuf when the client asks for it). Each `threadId` is a
 * Skein thread kept by the agent's message store (or its service) and owned by its creator.
 *
 * @example
 * const server = new AgUiServer({ agents: { helper: container.get(agentToken('helper')) }, corsOrigins: ['http://localhost:5173'] });
 * const url = await server.listen(8000); // POST http://127.0.0.1:8000/agents/helper
 */
export class AgUiServer {
  readonly #runners = new Map<string, AgUiRunner>();
  readonly #options: AgUiServerOptions;
  readonly #logger: AgUiServerLogger;
  readonly #turns = new SerialByKey();
  /** Thread ids with a run queued or running in this process. */
  readonly #busy = new Map<string, number>();
  readonly #cors: Set<string>;
  #guard: LocalRequestGuard | undefined;
  #server: Server | undefined;
  #fallback: AgUiListenOptions['fallback'];
  #warned = false;

  constructor(options: AgUiServerOptions) {
    this.#options = options;
    this.#logger = options.logger ?? defaultAgUiServerLogger;
    const threads = options.threads ?? new InMemoryAgUiThreadStore();
    const base = trimSlash(options.basePath ?? (options.agent ? '' : '/agents'));
    const entries: [string, AgUiServedAgent][] = options.agent
      ? [['', { agent: options.agent, ...(options.predictState ? { predictState: options.predictState } : {}) }]]
      : Object.entries(options.agents ?? {}).map(([name, served]) => [name, isServed(served) ? served : { agent: served }]);
    if (entries.length === 0) throw new TypeError('AgUiServer needs an agent to serve: new AgUiServer({ agents: { helper: agent } }) or new AgUiServer({ agent }).');
    if (options.agent && options.agents) throw new TypeError('AgUiServer takes `agent` (one agent at basePath) or `agents` (one per name), not both.');
    for (const [name, { agent, predictState, durable }] of entries) {
      if (durable && durable.agent.agent !== agent) {
        throw new ConfigurationError(`Agent "${name || 'agent'}" is served with a durable agent of another agent ("${durable.agent.agent.name ?? '?'}"): give { agent, durable: { agent: durableAgent, runner } } with durableAgent.agent === agent.`);
      }
      if (name !== '' && !AGENT_NAME.test(name)) throw new TypeError(`Agent name "${name}" cannot be a path segment: use 1-64 letters, digits, "_" or "-".`);
      const path = name === '' ? base || '/' : `${base}/${name}`;
      this.#runners.set(path, new AgUiRunner(name || agent.name || 'agent', agent, threads, this.#logger, options.keepPartial ?? false, options.contextInstructions ?? defaultAgUiContextInstructions, checkPredictState(name, predictState), options.forwardedProps, durable));
    }
    this.#cors = new Set((options.corsOrigins ?? []).map((o) => new URL(o).origin));
  }

  /** The paths served, one per agent. */
  get paths(): string[] {
    return [...this.#runners.keys()];
  }

  /**
   * The request listener: `http.createServer(server.handler)`, or mounted in express
   * (`app.use(server.handler)`; requests for other paths go to `next`).
   */
  readonly handler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void => {
    void this.#handle(req, res, next);
  };

  /** Listens on `host:port` (default 127.0.0.1, a free port) and resolves with the base URL. */
  async listen(port = 0, host = '127.0.0.1', options: AgUiListenOptions = {}): Promise<string> {
    if (this.#server) throw new Error('This AgUiServer is already listening; close it first.');
    this.#fallback = options.fallback;
    assertBindable(host, options.expose ?? false, 'The AG-UI server', '--expose (expose: true)');
    const server = createServer(this.handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const bound = (server.address() as AddressInfo).port;
    this.#guard = new LocalRequestGuard({
      port: bound,
      allowedHosts: [...(this.#options.allowedHosts ?? []), ...allowedHostsFromEnv()],
      allowedHostHint: `the AgUiServer allowedHosts option or ${ALLOWED_HOSTS_ENV}`,
    });
    this.#server = server;
    this.#warnOpen();
    return `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  }

  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.#guard = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): Promise<void> {
    const path = trimSlash(new URL(req.url ?? '/', 'http://x').pathname) || '/';
    const origin = req.headers.origin;
    const corsOk = origin !== undefined && this.#cors.has(origin);
    if (corsOk) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('vary', 'Origin');
      if (req.method === 'OPTIONS') {
        res.writeHead(204, { 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'content-type, authorization, accept', 'access-control-max-age': '600' }).end();
        return;
      }
    }
    // The local request guard (Host allowlist, Origin, no other CORS, JSON bodies) runs first; a configured origin passes its Origin check.
    const refusal = this.#guard?.check(corsOk ? withoutOrigin(req) : req);
    if (refusal) return sendRefusal(res, refusal);
    const runner = this.#runners.get(path);
    if (!runner) {
      if (next) return next();
      if (this.#fallback) return this.#fallback(req, res);
      return sendError(res, new AgUiRequestError(404, `No agent at ${path}; agents are served at ${this.paths.join(', ')}.`));
    }
    try {
      this.#warnOpen();
      if (req.method !== 'POST') throw new AgUiRequestError(405, `${req.method} ${path}: an AG-UI agent takes POST with a RunAgentInput JSON body.`);
      const owner = await this.#user(req);
      const json = parseJson(await readText(req, this.#options.maxBodyBytes ?? DEFAULT_MAX_BODY));
      const input = parseEnvelope(json);
      const busy = this.#busy.get(input.threadId) ?? 0;
      if (busy > 0 && this.#options.concurrency === 'reject') {
        throw new AgUiRequestError(409, `Thread "${input.threadId}" is running another run; wait for it to finish and send this one again.`);
      }
      this.#busy.set(input.threadId, busy + 1);
      await this.#turns.run(input.threadId, async () => {
        const prepared = await prepareChecked(runner, input, owner, json);
        const encoder = new EventEncoder({ accept: req.headers.accept });
        const controller = new AbortController();
        res.on('close', () => {
          if (!res.writableFinished) controller.abort();
        });
        res.writeHead(200, { 'content-type': encoder.getContentType(), 'cache-control': 'no-cache', connection: 'keep-alive' });
        const binary = encoder.getContentType() !== 'text/event-stream';
        // Events of one turn of the event loop go out in one write: a write per event costs a system call each.
        let pending: (string | Uint8Array)[] = [];
        const take = () => {
          const chunk = binary ? Buffer.concat(pending as Uint8Array[]) : (pending as string[]).join('');
          pending = [];
          return chunk;
        };
        const flush = () => {
          if (pending.length > 0 && res.writable) res.write(take());
        };
        const send = (event: BaseEvent) => {
          if (pending.length === 0) setImmediate(flush);
          pending.push(binary ? encoder.encodeBinary(event) : encoder.encodeSSE(event));
        };
        await runner.execute(prepared, send, controller.signal);
        // The last events go out with the end of the response: one write, not two.
        if (pending.length > 0 && res.writable) res.end(take());
        else res.end();
      }).finally(() => {
        const left = (this.#busy.get(input.threadId) ?? 1) - 1;
        if (left > 0) this.#busy.set(input.threadId, left);
        else this.#busy.delete(input.threadId);
      });
    } catch (error) {
      if (error instanceof AgUiRequestError) return sendError(res, error);
      const id = crypto.randomUUID();
      this.#logger.error(`AG-UI request ${req.method} ${path} failed [error id ${id}]`, error);
      sendError(res, new AgUiRequestError(400, `The request could not be served (error id ${id}).`), 500);
    }
  }

  async #user(req: IncomingMessage): Promise<string> {
    const authenticate = this.#options.authenticate;
    if (!authenticate) return '';
    let user: string | undefined;
    try {
      user = await authenticate(req);
    } catch (error) {
      this.#logger.warn(`AgUiServer: the authenticate hook refused a request: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!user) throw new AgUiRequestError(401, 'Authentication required (HTTP 401): send the credentials this server asks for.');
    return user;
  }

  #warnOpen(): void {
    if (this.#options.authenticate || this.#warned) return;
    this.#warned = true;
    this.#logger.warn('AgUiServer has no authentication: anyone who reaches it can use its agents, and all callers share one owner. Pass authenticate to require credentials.');
  }
}

function isServed(value: AIAgent | AgUiServedAgent): value is AgUiServedAgent {
  return typeof (value as AIAgent).runStream !== 'function' && typeof value === 'object' && value !== null && 'agent' in value;
}

function checkPredictState(name: string, rules: readonly AgUiPredictState[] | undefined): AgUiPredictState[] {
  return (rules ?? []).map((rule, i) => {
    for (const key of ['stateKey', 'tool', 'toolArgument'] as const) {
      if (typeof rule[key] !== 'string' || rule[key] === '') {
        throw new ConfigurationError(`predictState[${i}] of agent "${name || 'agent'}": "${key}" must be a non-empty string; found ${JSON.stringify(rule[key])}. Give { stateKey, tool, toolArgument }.`);
      }
    }
    return { stateKey: rule.stateKey, tool: rule.tool, toolArgument: rule.toolArgument };
  });
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch (error) {
    throw new AgUiRequestError(400, `The body is not JSON (${(error as Error).message}); send a RunAgentInput: { threadId, runId, messages, tools, context, state, forwardedProps }.`);
  }
}

/** The RunAgentInput schema without `messages`: those are checked one by one, only when new (see prepareChecked). */
let envelopeSchema: ReturnType<typeof RunAgentInputSchema.omit<{ messages: true }>> | undefined;

/**
 * The request checked against the AG-UI 1.0 schema, except the content of its messages: each
 * message here only needs an `id` and a `role` (strings). The whole history comes with every
 * request, and the messages the stored thread already holds are matched by id and never read
 * again, so their full check waits until the stored thread is known (prepareChecked).
 */
function parseEnvelope(json: unknown): RunAgentInput {
  envelopeSchema ??= RunAgentInputSchema.omit({ messages: true });
  const parsed = envelopeSchema.safeParse(json);
  const messages = (json as { messages?: unknown } | null)?.messages;
  if (!parsed.success || !Array.isArray(messages) || !messages.every(hasIdAndRole)) throw invalidInput(json);
  return { ...(parsed.data as Omit<RunAgentInput, 'messages'>), messages: messages as RunAgentInput['messages'] };
}

function hasIdAndRole(m: unknown): boolean {
  return typeof m === 'object' && m !== null && typeof (m as { id?: unknown }).id === 'string' && typeof (m as { role?: unknown }).role === 'string';
}

/** The 400 for a body that is not a valid RunAgentInput, naming the first issues of the full schema check. */
function invalidInput(json: unknown): AgUiRequestError {
  const parsed = RunAgentInputSchema.safeParse(json);
  const issues = parsed.success ? ['(root): not accepted'] : parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  return new AgUiRequestError(400, `The body is not a valid RunAgentInput: ${issues.join('; ')}.`);
}

/** Roles the runner matches against the stored thread (see ag-ui-reconcile.ts); others are always checked. */
const HISTORY_ROLES = new Set(['user', 'system', 'developer', 'assistant', 'tool']);

/**
 * `runner.prepare`, with every message it did not match to the stored thread checked against the
 * full schema. A bad body answers the same 400 as a check of the whole body up front would: when
 * `prepare` fails, the whole body is checked first, so a schema error wins over the runner's.
 */
async function prepareChecked(runner: AgUiRunner, input: RunAgentInput, owner: string, json: unknown): Promise<PreparedRun> {
  let prepared: PreparedRun;
  try {
    prepared = await runner.prepare(input, owner);
  } catch (error) {
    if (!RunAgentInputSchema.safeParse(json).success) throw invalidInput(json);
    throw error;
  }
  // A stored message is matched in order by id (kept), and then read for its id, role and text only.
  const { view, plan } = prepared;
  let i = 0;
  for (const m of input.messages) {
    const history = HISTORY_ROLES.has(m.role);
    const matched = history && i < plan.kept && view[i]?.id === m.id;
    if (history) i++;
    if (!matched && !MessageSchema.safeParse(m).success) throw invalidInput(json);
  }
  return prepared;
}

/** The body as text; one over the limit is this server's 413. */
async function readText(req: IncomingMessage, limit: number): Promise<string> {
  try {
    return (await readRequestBody(req, limit)).toString('utf8');
  } catch (error) {
    throw error instanceof RequestBodyTooLargeError ? new AgUiRequestError(413, error.message) : error;
  }
}

function sendError(res: ServerResponse, error: AgUiRequestError, status: number = error.status): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  // A 413 closes the connection: the rest of a body too large is not read.
  res.writeHead(status, { 'content-type': 'application/json', ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}), ...(status === 405 ? { allow: 'POST' } : {}), ...(status === 413 ? { connection: 'close' } : {}) });
  res.end(JSON.stringify({ error: error.message }));
}

/** The request as the guard sees it when its Origin is a configured CORS origin (checked here instead). */
function withoutOrigin(req: IncomingMessage): IncomingMessage {
  const { origin: _origin, ...headers } = req.headers;
  return Object.assign(Object.create(req) as IncomingMessage, { headers });
}

function trimSlash(path: string): string {
  return path.replace(/\/+$/, '');
}
