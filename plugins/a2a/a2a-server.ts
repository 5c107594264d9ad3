import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import type { TaskStore } from '@a2a-js/sdk/server';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AIAgent, ChatMessageStoreFactory, SerializationRegistry } from 'skein';
import { type A2AContextStore, InMemoryA2AContextStore } from './a2a-context-store.js';
import { AGENT_CARD_PATH, DefaultRequestHandler, InMemoryTaskStore } from './a2a-peers.js';
import { UserBuilder, agentCardHandler, jsonRpcHandler, express } from './express-peers.js';
import { SkeinAgentExecutor } from './skein-agent-executor.js';

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
  /** The public base URL clients reach this server at; the listen address by default. */
  url?: string;
  /** Where each context's serialized thread is kept; in memory by default. Share one to scale out. */
  contextStore?: A2AContextStore;
  /** Where new Skein-managed threads keep their messages; the agent's own factory by default. */
  chatMessageStoreFactory?: ChatMessageStoreFactory;
  serializationRegistry?: SerializationRegistry;
  /** The SDK's task store (share a database one across instances); in memory by default. */
  taskStore?: TaskStore;
}

export const A2A_JSONRPC_PATH = '/a2a/jsonrpc';

/**
 * The express app, typed as the Node request listener it is (express's types are not a
 * dependency of an app that installs skein): mount it in your own express app
 * (`app.use(server.app)`) or serve it (`http.createServer(server.app)`).
 */
export type A2ARequestListener = (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => void;

/**
 * Hosts a Skein agent as an A2A 1.0 endpoint on express: the agent card at
 * `/.well-known/agent-card.json`, JSON-RPC (with streaming) at `/a2a/jsonrpc`. Each A2A
 * `contextId` is one AgentThread, kept in the context store between turns.
 */
export class A2AServer {
  /** The express app; mount it in your own app, or call `listen`. */
  readonly app: A2ARequestListener;
  readonly #app: ReturnType<typeof express>;
  readonly card: AgentCard;
  readonly executor: SkeinAgentExecutor;
  readonly contextStore: A2AContextStore;
  readonly requestHandler: DefaultRequestHandler;
  #server: Server | undefined;
  #url: string | undefined;

  constructor(options: A2AServerOptions) {
    if (!options?.agent) throw new TypeError('A2AServer needs the agent to host, e.g. new A2AServer({ agent }).');
    const { agent } = options;
    this.contextStore = options.contextStore ?? new InMemoryA2AContextStore();
    this.#url = options.url?.replace(/\/+$/, '');
    const name = options.name ?? agent.name ?? 'skein-agent';
    const description = options.description ?? agent.description ?? `The Skein agent "${name}".`;
    this.card = {
      name,
      description,
      version: options.version ?? '1.0.0',
      supportedInterfaces: [],
      provider: undefined,
      capabilities: { streaming: true, pushNotifications: false, extensions: [] },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: (options.skills ?? [{ id: 'chat', name, description, tags: ['chat'] }]).map(toSkill),
      signatures: [],
    };
    if (this.#url) this.#setInterfaces(this.#url);
    this.executor = new SkeinAgentExecutor({
      agent,
      contextStore: this.contextStore,
      chatMessageStoreFactory: options.chatMessageStoreFactory,
      serializationRegistry: options.serializationRegistry,
    });
    this.requestHandler = new DefaultRequestHandler(this.card, options.taskStore ?? new InMemoryTaskStore(), this.executor);
    this.app = this.#app = express();
    this.#app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: this.requestHandler }));
    this.#app.use(A2A_JSONRPC_PATH, jsonRpcHandler({ requestHandler: this.requestHandler, userBuilder: UserBuilder.noAuthentication }));
  }

  /** The base URL (the card is at `${url}/.well-known/agent-card.json`). */
  get url(): string | undefined {
    return this.#url;
  }

  get agentCardUrl(): string | undefined {
    return this.#url && `${this.#url}/${AGENT_CARD_PATH}`;
  }

  /** Listens on `host:port` (default 127.0.0.1, a free port) and resolves with the base URL. */
  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    if (this.#server) throw new Error('This A2AServer is already listening; close it first.');
    const server = await new Promise<Server>((resolve, reject) => {
      const s = this.#app.listen(port, host, (error?: Error) => (error ? reject(error) : resolve(s)));
    });
    this.#server = server;
    if (!this.#url) {
      const address = server.address() as AddressInfo;
      this.#url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
      this.#setInterfaces(this.#url);
    }
    return this.#url;
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  }

  #setInterfaces(base: string): void {
    this.card.supportedInterfaces.splice(0, this.card.supportedInterfaces.length, {
      url: `${base}${A2A_JSONRPC_PATH}`,
      protocolBinding: 'JSONRPC',
      tenant: '',
      protocolVersion: '1.0',
    });
  }
}

function toSkill(skill: A2ASkillInfo): AgentSkill {
  return {
    id: skill.id,
    name: skill.name,
    description: skill.description,
    tags: skill.tags ?? [],
    examples: skill.examples ?? [],
    inputModes: ['text/plain'],
    outputModes: ['text/plain'],
    securityRequirements: [],
  };
}
