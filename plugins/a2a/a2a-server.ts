import type { AgentSkill } from '@a2a-js/sdk';
import type { Request, Response } from 'express-serve-static-core';
import type { AgentCard, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, PushNotificationSender, PushNotificationStore, ServerCallContext, TaskStore, User } from '@a2a-js/sdk/server';
import type { UserBuilder as SdkUserBuilder } from '@a2a-js/sdk/server/express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ALLOWED_HOSTS_ENV, ConfigurationError, LocalRequestGuard, allowedHostsFromEnv, isWildcardAddress } from 'skein';
import type { AIAgent, ChatMessageStoreFactory, SerializationRegistry } from 'skein';
import { type A2AContextStore, InMemoryA2AContextStore } from './a2a-context-store.js';
import {
  A2A_CONTENT_TYPE,
  A2A_VERSION_HEADER,
  AGENT_CARD_PATH,
  agentCardToJson,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from './a2a-peers.js';
import { UserBuilder, agentCardHandler, express, jsonRpcHandler, legacyAgentCardRouter, restHandler } from './express-peers.js';
import { OwnedRequestHandler } from './owned-request-handler.js';
import { sendBindingRefusal } from './binding-refusal.js';
import { LeasedTaskStore, type TaskLeaseOptions } from './leased-task-store.js';
import { type A2AGrpcTls, type A2AGrpcUserBuilder, GrpcBinding } from './a2a-grpc-server.js';
import { type A2AServerLogger, SkeinAgentExecutor, defaultA2AServerLogger } from './skein-agent-executor.js';
import { type A2ADurable, DurableTaskFollower } from './a2a-durable.js';

/** A skill the agent card advertises. */
export interface A2ASkillInfo {
  id: string;
  name: string;
  description: string;
  tags?: string[];
  examples?: string[];
}

export interface A2AServerOptions {
  /** The Skein agent to host (a ChatAgent, an A2AAgent, any AIAgent). */
  agent: AIAgent;
  /** Card name; the agent's name by default. */
  name?: string;
  description?: string;
  version?: string;
  /** Skills on the card; one `chat` skill from the agent's name and description by default. */
  skills?: A2ASkillInfo[];
  /**
   * The public base URL clients reach this server at (behind a proxy, or where `app` is
   * mounted, path included), e.g. `https://agents.example.com/travel`. Default: the
   * `SKEIN_A2A_PUBLIC_URL` environment variable, else the address `listen` binds to when it is
   * a specific host (a wildcard bind such as 0.0.0.0 is refused: it is not an address a client
   * can reach).
   */
  url?: string;
  /** Where each context's serialized thread is kept; in memory by default. Share one to scale out. */
  contextStore?: A2AContextStore;
  /** Where new Skein-managed threads keep their messages; the agent's own factory by default. */
  chatMessageStoreFactory?: ChatMessageStoreFactory;
  serializationRegistry?: SerializationRegistry;
  /** The SDK's task store (share a database one across instances); in memory by default. */
  taskStore?: TaskStore;
  /**
   * Leases on running tasks, so a task whose instance died becomes `failed` (see `LeasedTaskStore`):
   * on by default when you pass `taskStore` (lease 30 s, renewed every 10 s), off for the default
   * in-memory store; `false` turns it off.
   */
  taskLease?: TaskLeaseOptions | false;
  /**
   * Authentication: the SDK's `UserBuilder`, turning a request into a user. A request whose user
   * is not authenticated (or whose builder throws) is answered HTTP 401 before anything runs.
   * Every context is owned by the user who started it. Without it, the server is open to anyone
   * and says so once at `listen` (and on its first request when mounted).
   */
  userBuilder?: A2AUserBuilder;
  /** Security schemes the card declares (what `userBuilder` checks), in the SDK's card types. */
  securitySchemes?: AgentCard['securitySchemes'];
  securityRequirements?: AgentCard['securityRequirements'];
  /** Card fields a registry shows. */
  provider?: { organization: string; url: string };
  documentationUrl?: string;
  iconUrl?: string;
  /**
   * Push notifications through the SDK (config set/get/list/delete; delivery by its
   * `DefaultPushNotificationSender`): `true`, or the store of webhook configs (in memory by
   * default: configs then live in this process only) and which webhook URLs callers may register
   * (default: any https URL; the server POSTs there, so narrow it to what your network allows).
   * Off by default; the card's `capabilities.pushNotifications` says which.
   */
  pushNotifications?: boolean | { store?: PushNotificationStore; webhookAllowed?: (url: URL) => boolean; timeoutMs?: number };
  /**
   * Hosts (`name` or `name:port`) accepted in the `Host` header besides loopback and the public
   * URL's host, when `listen` serves (with `SKEIN_ALLOWED_HOSTS`); see "Request checks" in docs/a2a.md.
   */
  allowedHosts?: string[];
  /** Serve A2A 0.3 clients too, through the SDK's compatibility layer (default true). */
  legacyCompat?: boolean;
  /**
   * The card a request that names no protocol version (no `A2A-Version` header, no
   * `?A2A-Version=` parameter) gets: `'1.0'` (default), the A2A 1.0 card, valid against the 1.0
   * JSON schema; or `'0.3'`, the SDK's 0.3 card (with the 1.0 interfaces embedded), for 0.3
   * clients that only know the base URL; it does not validate against the 1.0 schema (see
   * "Versions of the card" in docs/a2a.md). Whatever the choice, a request asking for 0.3 gets the
   * 0.3 card and one asking for 1.0 the 1.0 card. `'0.3'` needs `legacyCompat`.
   */
  unversionedCard?: '1.0' | '0.3';
  /** Where failures (with their error id) and notices go; see `A2AServerLogger`. */
  logger?: A2AServerLogger;
  /**
   * The public gRPC address clients reach (`host:port`, e.g. `agents.example.com:443` behind a
   * proxy), declared in the card once `listenGrpc` serves. Default: the
   * `SKEIN_A2A_GRPC_PUBLIC_URL` environment variable, else the address `listenGrpc` binds to
   * when it is a specific host (a wildcard bind is refused, as for `url`).
   */
  grpcUrl?: string;
  /**
   * Authentication for gRPC calls (their metadata as `headers`), as `userBuilder` is for HTTP.
   * Required by `listenGrpc` when `userBuilder` is given, so gRPC is never the open door.
   */
  grpcUserBuilder?: A2AGrpcUserBuilder;
  /**
   * Run the agent durably (docs/durable.md): `{ agent: durableAgent, runner }` with
   * `durableAgent.agent === agent`. Each task is a durable run whose run id is the task id; its
   * stream is read from the run's durable stream, and a task whose instance died is finished from
   * the run by whichever instance is asked about it (see "Durable agents" in docs/a2a.md). Task
   * leases are then off unless `taskLease` is given: a lost instance does not lose the task.
   */
  durable?: A2ADurable;
}

/**
 * The express app, typed as the Node request listener it is (express's types are not a
 * dependency of an app that installs skein): mount it in your own express app
 * (`app.use(server.app)`) or serve it (`http.createServer(server.app)`).
 */
export type A2ARequestListener = (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => void;

/** The request the `userBuilder` gets: the Node request (an express request at run time). */
export type A2AUserBuilder = (request: IncomingMessage) => Promise<User>;

export const A2A_JSONRPC_PATH = '/a2a/jsonrpc';
export const A2A_REST_PATH = '/a2a/rest';
export const A2A_PUBLIC_URL_ENV = 'SKEIN_A2A_PUBLIC_URL';
export const A2A_GRPC_PUBLIC_URL_ENV = 'SKEIN_A2A_GRPC_PUBLIC_URL';
export type { A2AGrpcRequest, A2AGrpcTls, A2AGrpcUserBuilder } from './a2a-grpc-server.js';

/**
 * Hosts a Skein agent as an A2A 1.0 endpoint on express: the agent card at
 * `/.well-known/agent-card.json`, JSON-RPC (with streaming) at `/a2a/jsonrpc`, HTTP+JSON at
 * `/a2a/rest`, and the same for A2A 0.3 clients; gRPC too with `listenGrpc`. Each A2A
 * `contextId` is one AgentThread, kept in the context store between turns and owned by the user
 * who started it.
 *
 * @example
 * const server = new A2AServer({ agent, url: 'https://agents.example.com', userBuilder: async (req) => userFromToken(req) });
 * await server.listen(8080, '0.0.0.0');
 */
export class A2AServer {
  /** The express app; mount it in your own app (give `url`), or call `listen`. */
  readonly app: A2ARequestListener;
  readonly #app: ReturnType<typeof express>;
  readonly card: AgentCard;
  readonly executor: SkeinAgentExecutor;
  readonly contextStore: A2AContextStore;
  readonly requestHandler: A2ARequestHandler;
  /** The task store in use: yours (or the in-memory default), under a `LeasedTaskStore` when leases are on. */
  readonly taskStore: TaskStore;
  #server: Server | undefined;
  #url: string | undefined;
  readonly #logger: A2AServerLogger;
  readonly #authenticated: boolean;
  #warned = false;

  constructor(options: A2AServerOptions) {
    if (!options?.agent) throw new TypeError('A2AServer needs the agent to host, e.g. new A2AServer({ agent }).');
    const { agent, durable } = options;
    if (durable && durable.agent.agent !== agent) {
      throw new ConfigurationError(
        `A2AServer: the durable agent serves another agent ("${durable.agent.agent.name ?? '?'}", not "${agent.name ?? '?'}"); pass { agent, durable: { agent: durableAgent(agent, ...), runner } } with durable.agent.agent === agent.`,
      );
    }
    this.contextStore = options.contextStore ?? new InMemoryA2AContextStore();
    this.#logger = options.logger ?? defaultA2AServerLogger;
    this.#authenticated = options.userBuilder !== undefined;
    const url = options.url ?? process.env[A2A_PUBLIC_URL_ENV];
    this.#url = url ? publicUrl(url, options.url !== undefined ? 'url' : A2A_PUBLIC_URL_ENV) : undefined;
    const grpcUrl = options.grpcUrl ?? process.env[A2A_GRPC_PUBLIC_URL_ENV];
    this.#grpcPublic = grpcUrl ? publicGrpcAddress(grpcUrl, options.grpcUrl !== undefined ? 'grpcUrl' : A2A_GRPC_PUBLIC_URL_ENV) : undefined;
    this.#grpcUserBuilder = options.grpcUserBuilder;
    const name = options.name ?? agent.name ?? 'skein-agent';
    const description = options.description ?? agent.description ?? `The Skein agent "${name}".`;
    this.card = {
      name,
      description,
      version: options.version ?? '1.0.0',
      supportedInterfaces: [],
      provider: options.provider,
      documentationUrl: options.documentationUrl,
      iconUrl: options.iconUrl,
      capabilities: { streaming: true, pushNotifications: options.pushNotifications !== undefined && options.pushNotifications !== false, extensions: [] },
      securitySchemes: options.securitySchemes ?? {},
      securityRequirements: options.securityRequirements ?? [],
      defaultInputModes: ['text/plain', 'application/json'],
      defaultOutputModes: ['text/plain', 'application/json'],
      skills: (options.skills ?? [{ id: 'chat', name, description, tags: ['chat'] }]).map(toSkill),
      signatures: [],
    };
    this.#legacy = options.legacyCompat ?? true;
    if (this.#url) this.#setInterfaces();
    this.executor = new SkeinAgentExecutor({
      agent,
      contextStore: this.contextStore,
      chatMessageStoreFactory: options.chatMessageStoreFactory,
      serializationRegistry: options.serializationRegistry,
      logger: this.#logger,
      durable,
    });
    const push = options.pushNotifications === true ? {} : options.pushNotifications || undefined;
    const pushStore = push ? (push.store ?? new InMemoryPushNotificationStore()) : undefined;
    const pushSender = pushStore ? new DefaultPushNotificationSender(pushStore, { timeout: push?.timeoutMs }) : undefined;
    this.#givenTaskStore = options.taskStore;
    // A durable task outlives its instance, so a lapsed lease would fail a task that is still running.
    const lease = durable && options.taskLease === undefined ? false : options.taskLease;
    const taskStore = (this.taskStore = leased(options.taskStore, lease, this.#logger, pushSender, this.executor));
    const inner = new DefaultRequestHandler(this.card, taskStore, this.executor, undefined, pushStore, pushSender);
    const executor = this.executor;
    const follower = durable
      ? new DurableTaskFollower(durable, this.contextStore, taskStore, (id) => executor.runsHere(id), (id, contextId, error) => executor.failedStatus(id, contextId, error), (id, error) => this.#logger.error(`A2A task ${id}: finishing it from its durable run failed:`, error))
      : undefined;
    this.requestHandler = new OwnedRequestHandler(inner, this.contextStore, taskStore, push ? (push.webhookAllowed ?? ((url) => url.protocol === 'https:')) : undefined, this.#logger, follower);
    const legacyCompat = { enabled: this.#legacy };
    const userBuilder = this.#userBuilder(options.userBuilder);
    this.#allowedHosts = options.allowedHosts ?? [];
    this.app = this.#app = express();
    // Skein's shared request checks (Host allowlist, Origin, no CORS, JSON bodies) once `listen` knows the port;
    // a wrong content type on a binding is answered in that binding's error format.
    this.#app.use((req, res, next) => {
      const refusal = this.#guard?.check(req);
      if (refusal) sendBindingRefusal(req, res, refusal, { jsonRpc: A2A_JSONRPC_PATH, rest: A2A_REST_PATH });
      else next();
    });
    this.#app.use(`/${AGENT_CARD_PATH}`, (_req, res, next) => {
      if (this.#url) return next();
      res.status(503).json({ error: this.#noUrlMessage() });
    });
    const unversioned = unversionedCardOption(options.unversionedCard);
    if (this.#legacy) {
      // The SDK's compat card router serves the 0.3 card to every request that does not ask for
      // 1.0; only those that ask for 0.3 (or name no version, when unversionedCard is '0.3') reach it.
      const legacyCard = legacyAgentCardRouter({ agentCardProvider: this.requestHandler });
      this.#app.use(`/${AGENT_CARD_PATH}`, (req, res, next) => {
        if (asksForLegacyCard(req, unversioned)) return legacyCard(req, res, next);
        res.append('Vary', A2A_VERSION_HEADER);
        next();
      });
    } else if (unversioned === '0.3') {
      throw new ConfigurationError("A2AServer: unversionedCard '0.3' serves the A2A 0.3 card, which needs legacyCompat (on by default); remove legacyCompat: false or unversionedCard.");
    }
    // The card as the protocol's JSON (security schemes keyed by kind), not the SDK's in-memory shape.
    this.#app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: async () => agentCardToJson(this.card) as AgentCard }));
    this.#app.use(A2A_JSONRPC_PATH, this.#gate(), jsonRpcHandler({ requestHandler: this.requestHandler, userBuilder, legacyCompat }));
    this.#app.use(A2A_REST_PATH, this.#gate(), restHandler({ requestHandler: this.requestHandler, userBuilder, legacyCompat }));
  }

  readonly #legacy: boolean;
  readonly #givenTaskStore: TaskStore | undefined;
  readonly #allowedHosts: string[];
  #guard: LocalRequestGuard | undefined;
  readonly #grpcPublic: string | undefined;
  readonly #grpcUserBuilder: A2AGrpcUserBuilder | undefined;
  #grpc: GrpcBinding | undefined;
  /** The gRPC address the card declares, while `listenGrpc` serves. */
  #grpcUrl: string | undefined;

  /** The base URL (the card is at `${url}/.well-known/agent-card.json`). */
  get url(): string | undefined {
    return this.#url;
  }

  /** Where `listen` bound (`http://host:port`), which may differ from the public `url` behind a proxy. */
  get listenAddress(): string | undefined {
    const address = this.#server?.address();
    if (!address || typeof address === 'string') return address ?? undefined;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  get agentCardUrl(): string | undefined {
    return this.#url && `${this.#url}/${AGENT_CARD_PATH}`;
  }

  /**
   * Listens on `host:port` (default 127.0.0.1, a free port) and resolves with the public base
   * URL. A wildcard host (0.0.0.0, ::) needs the public URL (`url` option or
   * `SKEIN_A2A_PUBLIC_URL`): a ConfigurationError says so before anything listens.
   */
  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    if (this.#server) throw new Error('This A2AServer is already listening; close it first.');
    if (!this.#url && isWildcard(host)) throw new ConfigurationError(this.#noUrlMessage(host));
    const server = await new Promise<Server>((resolve, reject) => {
      const s = this.#app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(s)));
    });
    this.#server = server;
    const address = server.address() as AddressInfo;
    if (!this.#url) {
      this.#url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
      this.#setInterfaces();
    }
    const publicUrl = new URL(this.#url);
    const publicHost = `${publicUrl.hostname}:${publicUrl.port || (publicUrl.protocol === 'https:' ? 443 : 80)}`;
    this.#guard = new LocalRequestGuard({
      port: address.port,
      allowedHosts: [publicHost, ...this.#allowedHosts, ...allowedHostsFromEnv()],
      allowedHostHint: `the A2AServer allowedHosts option or ${ALLOWED_HOSTS_ENV}`,
      bodyTypes: ['application/json', A2A_CONTENT_TYPE],
    });
    this.#warnOpen();
    return this.#url;
  }

  /** The gRPC address the card declares (`host:port`) while `listenGrpc` serves. */
  get grpcUrl(): string | undefined {
    return this.#grpcUrl;
  }

  /**
   * Serves the A2A gRPC binding (protocol 1.0, and 0.3 unless `legacyCompat: false`) on
   * `host:port` (default 127.0.0.1, a free port), plaintext HTTP/2, or TLS with `tls` (PEM key
   * and certificate; or terminate TLS at a proxy), over the same request handler,
   * authentication and ownership as the HTTP bindings; resolves with the gRPC address the card
   * then declares. A wildcard host needs `grpcUrl` (or
   * `SKEIN_A2A_GRPC_PUBLIC_URL`), and a server with `userBuilder` needs `grpcUserBuilder`:
   * a ConfigurationError says so before anything listens. Needs `@grpc/grpc-js` and
   * `@bufbuild/protobuf` installed.
   */
  async listenGrpc(port = 0, host = '127.0.0.1', options: { tls?: A2AGrpcTls } = {}): Promise<string> {
    if (this.#grpc) throw new Error('This A2AServer already serves gRPC; close it first.');
    if (!this.#grpcPublic && isWildcard(host)) {
      throw new ConfigurationError(
        `A2AServer cannot declare its gRPC address: listenGrpc binds ${host || 'every interface'}, an address no client can reach. Pass the public gRPC address: new A2AServer({ grpcUrl: 'agents.example.com:443' }) or set ${A2A_GRPC_PUBLIC_URL_ENV}.`,
      );
    }
    if (this.#authenticated && !this.#grpcUserBuilder) {
      throw new ConfigurationError(
        'A2AServer authenticates HTTP requests (userBuilder) but has no grpcUserBuilder, so gRPC calls could not be checked. Pass grpcUserBuilder: it gets the call metadata as `headers`, e.g. grpcUserBuilder: async (req) => userFromToken(req.headers.authorization).',
      );
    }
    const binding = new GrpcBinding({
      requestHandler: this.requestHandler,
      userBuilder: this.#grpcUserBuilder,
      legacy: this.#legacy,
      onCall: () => this.#warnOpen(),
      onRefused: (error) => this.#logger.warn(`A2AServer "${this.card.name}": the grpcUserBuilder refused a call: ${error instanceof Error ? error.message : String(error)}`),
    });
    this.#grpc = binding;
    let bound: number;
    try {
      bound = await binding.listen(port, host, options.tls);
    } catch (error) {
      this.#grpc = undefined;
      throw error;
    }
    this.#grpcUrl = this.#grpcPublic ?? `${host.includes(':') ? `[${host}]` : host}:${bound}`;
    this.#setInterfaces();
    this.#warnOpen();
    return this.#grpcUrl;
  }

  /** Stops the HTTP server (`listen`) and the gRPC server (`listenGrpc`), whichever run. */
  async close(): Promise<void> {
    // Stops renewing the leases of a store made here (a LeasedTaskStore you passed is yours to close).
    if (this.taskStore instanceof LeasedTaskStore && this.taskStore !== this.#givenTaskStore) this.taskStore.close();
    const grpc = this.#grpc;
    if (grpc) {
      this.#grpc = undefined;
      this.#grpcUrl = undefined;
      this.#setInterfaces();
      await grpc.close();
    }
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    this.#guard = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  }

  #noUrlMessage(host?: string): string {
    const found = host ? `it listens on ${host}, an address no client can reach` : 'it was mounted without a `url`';
    return `A2AServer cannot publish its agent card: ${found}. Pass the public base URL: new A2AServer({ url: 'https://host/path' }) or set ${A2A_PUBLIC_URL_ENV}.`;
  }

  #warnOpen(): void {
    if (this.#authenticated || this.#warned) return;
    this.#warned = true;
    this.#logger.warn(
      `A2AServer "${this.card.name}" has no authentication: anyone who reaches it can use the agent, and all callers share one owner. Pass userBuilder (and securitySchemes) to require credentials.`,
    );
  }

  /** Authenticates before the SDK sees the request: no user, no A2A processing (HTTP 401). */
  #gate(): (req: Request, res: Response, next: () => void) => void {
    return (req, res, next) => {
      this.#warnOpen();
      if (!this.#authenticated) return next();
      (this.#resolveUser(req) as Promise<User | undefined>).then(
        (user) => {
          if (user?.isAuthenticated) {
            res.locals[USER_KEY] = user;
            return next();
          }
          res.status(401).setHeader('WWW-Authenticate', this.#challenge()).json(UNAUTHENTICATED);
        },
        (error: unknown) => {
          this.#logger.warn(`A2AServer "${this.card.name}": the userBuilder refused a request: ${error instanceof Error ? error.message : String(error)}`);
          res.status(401).setHeader('WWW-Authenticate', this.#challenge()).json(UNAUTHENTICATED);
        },
      );
    };
  }

  #resolveUser: (req: Request) => Promise<User | undefined> = async () => undefined;

  #userBuilder(builder: A2AUserBuilder | undefined): SdkUserBuilder {
    if (!builder) return UserBuilder.noAuthentication;
    this.#resolveUser = (req) => builder(req);
    // The gate already built the user; the SDK handlers take it from there.
    return async (req: Request) => (req.res?.locals[USER_KEY] as User | undefined) ?? builder(req);
  }

  #challenge(): string {
    const kinds = Object.values(this.card.securitySchemes).map((s) => s.scheme?.$case);
    return kinds.includes('apiKeySecurityScheme') && !kinds.includes('httpAuthSecurityScheme') ? 'ApiKey' : 'Bearer';
  }

  /** JSON-RPC and HTTP+JSON at the public URL, then gRPC while it is served; 1.0 first, then 0.3. */
  #setInterfaces(): void {
    const versions = this.#legacy ? ['1.0', '0.3'] : ['1.0'];
    const base = this.#url;
    const grpc = this.#grpcUrl;
    const interfaces = versions.flatMap((protocolVersion) => [
      ...(base
        ? [
            { url: `${base}${A2A_JSONRPC_PATH}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion },
            { url: `${base}${A2A_REST_PATH}`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion },
          ]
        : []),
      ...(grpc ? [{ url: grpc, protocolBinding: 'GRPC', tenant: '', protocolVersion }] : []),
    ]);
    this.card.supportedInterfaces.splice(0, this.card.supportedInterfaces.length, ...interfaces);
  }
}

const USER_KEY = 'skeinA2AUser';

function unversionedCardOption(value: string | undefined): '1.0' | '0.3' {
  if (value === undefined || value === '1.0' || value === '0.3') return value ?? '1.0';
  throw new ConfigurationError(`A2AServer unversionedCard: expected '1.0' or '0.3', found ${JSON.stringify(value)}.`);
}

/**
 * Whether a card request asks for the 0.3 card: `A2A-Version: 0.x`, or (A2A 1.0 lets clients put
 * the version in the query instead) `?A2A-Version=0.x`, the URL to give 0.3 clients that cannot
 * send the header; with neither, `unversioned` decides.
 */
function asksForLegacyCard(req: Request, unversioned: '1.0' | '0.3'): boolean {
  const asked = req.header(A2A_VERSION_HEADER)?.trim() || new URL(req.originalUrl, 'http://card').searchParams.get(A2A_VERSION_HEADER)?.trim();
  return asked ? /^0\./.test(asked) : unversioned === '0.3';
}
const UNAUTHENTICATED = { error: { code: 401, message: "Authentication required (HTTP 401): send the credentials the agent card's securitySchemes ask for." } };

/**
 * The task store the server uses: the given one under a lease (unless it is one already, or
 * leases are off); a task found lost is pushed to its webhooks like any other update, and a
 * task moved on elsewhere stops running here.
 */
function leased(
  store: TaskStore | undefined,
  lease: TaskLeaseOptions | false | undefined,
  logger: A2AServerLogger,
  push: PushNotificationSender | undefined,
  executor: SkeinAgentExecutor,
): TaskStore {
  if (lease === false || store instanceof LeasedTaskStore || (!store && !lease)) return store ?? new InMemoryTaskStore();
  const onLost = (task: Task, context: ServerCallContext) => {
    const update = { taskId: task.id, contextId: task.contextId, status: task.status, metadata: undefined };
    push?.send({ payload: { $case: 'statusUpdate', value: update } }, context, task).catch((error: unknown) => logger.error(`A2A task ${task.id}: its push notification failed:`, error));
  };
  // A task canceled (or failed) through another instance: stop running it here.
  const onMovedOn = (task: Task) => task.status && executor.abandon(task.id, task.status);
  return new LeasedTaskStore(store ?? new InMemoryTaskStore(), { logger, onLost, onMovedOn, ...lease });
}

function isWildcard(host: string): boolean {
  return host === '' || isWildcardAddress(host) || host === '0:0:0:0:0:0:0:0';
}

function publicUrl(value: string, source: string): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigurationError(`A2AServer ${source}: expected the public base URL, e.g. https://agents.example.com/travel, found ${JSON.stringify(value)}.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigurationError(`A2AServer ${source}: expected an http(s) URL, found ${JSON.stringify(value)}.`);
  }
  if (isWildcard(parsed.hostname)) {
    throw new ConfigurationError(`A2AServer ${source}: ${parsed.hostname} is a bind address, not one a client can reach; give the host clients use, e.g. https://agents.example.com.`);
  }
  return value.replace(/\/+$/, '');
}

/** `host:port` (a name, IPv4, or `[IPv6]`), not a bind address. */
function publicGrpcAddress(value: string, source: string): string {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^\s/:[\]]+):(\d{1,5})$/.exec(value.trim());
  if (!match) {
    throw new ConfigurationError(`A2AServer ${source}: expected the public gRPC address as host:port, e.g. agents.example.com:443 (no scheme, no path), found ${JSON.stringify(value)}.`);
  }
  const host = match[1]!.replace(/^\[|\]$/g, '');
  const port = Number(match[2]);
  if (port < 1 || port > 65535) {
    throw new ConfigurationError(`A2AServer ${source}: ${port} is not a port clients can dial (1-65535), in ${JSON.stringify(value)}.`);
  }
  if (isWildcard(host)) {
    throw new ConfigurationError(`A2AServer ${source}: ${host} is a bind address, not one a client can reach; give the host clients use, e.g. agents.example.com:443.`);
  }
  return value.trim();
}

function toSkill(skill: A2ASkillInfo): AgentSkill {
  return {
    id: skill.id,
    name: skill.name,
    description: skill.description,
    tags: skill.tags ?? [],
    examples: skill.examples ?? [],
    inputModes: ['text/plain', 'application/json'],
    outputModes: ['text/plain', 'application/json'],
    securityRequirements: [],
  };
}
