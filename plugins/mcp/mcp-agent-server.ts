import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server as HttpServer, type ServerResponse, createServer } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type AIAgent,
  type AIContent,
  type AgentThread,
  type ChatMessage,
  type FunctionApprovalResponseContent,
  LocalRequestGuard,
  RequestBodyTooLargeError,
  SerialByKey,
  type SerializedThread,
  assertBindable,
  readRequestBody,
  sendRefusal,
  waitingApprovalsOf,
} from 'skein';
import { importSdk } from './mcp-sdk.js';

/** Where the server keeps each conversation's serialized thread between calls, by thread id. */
export interface McpThreadStore {
  load(id: string): Promise<SerializedThread | undefined>;
  save(id: string, agentName: string, thread: SerializedThread): Promise<void>;
}

/**
 * Thread ids -> serialized threads in this process. A thread whose messages live in a durable
 * store (sqlite, redis, postgres) keeps only its key here; give a persistent McpThreadStore (the
 * CLI keeps them as files) when conversations must outlive the process.
 */
export class InMemoryMcpThreadStore implements McpThreadStore {
  readonly #threads = new Map<string, SerializedThread>();
  async load(id: string): Promise<SerializedThread | undefined> {
    return this.#threads.get(id);
  }
  async save(id: string, _agentName: string, thread: SerializedThread): Promise<void> {
    this.#threads.set(id, thread);
  }
}

export interface McpAgentServerOptions {
  /** Tool name suffix -> agent: each becomes the MCP tool `ask_<name>`. */
  agents: Record<string, AIAgent>;
  threads?: McpThreadStore;
  /** Server name reported to clients. Default `skein`. */
  name?: string;
  version?: string;
  /** Makes a new thread id; default a random UUID. */
  newThreadId?: () => string;
}

export interface McpHttpListenOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. A non-loopback address needs `expose: true`. */
  host?: string;
  /** Listen on a non-loopback `host` on purpose (other machines can then run your agents; there is no authentication). */
  expose?: boolean;
  /**
   * Hosts answered besides 127.0.0.1, localhost and [::1] (`name` or `name:port`): every request
   * passes Skein's shared local request guard first (Host and Origin allowlist against DNS
   * rebinding, no CORS, JSON bodies), so no web page can drive the server.
   */
  allowedHosts?: readonly string[];
}

type ServerModule = typeof import('@modelcontextprotocol/sdk/server/index.js');
type TypesModule = typeof import('@modelcontextprotocol/sdk/types.js');

const TOOL_NAME = /^[A-Za-z0-9_-]{1,60}$/;

/**
 * Skein agents as an MCP server: each agent is a tool `ask_<agent>` taking `input` (text), an
 * optional `thread` id and optional `approvals` (answers to the approval requests of the previous
 * reply); it answers with the reply, the thread id to continue with, and any approval requests. Threads are
 * created by the agent (so they live in its configured message store) and kept, serialized, in
 * `threads` between calls.
 *
 * @example
 * const server = new McpAgentServer({ agents: { helper: container.get(agentToken('helper')) } });
 * await server.serveStdio();
 */
export class McpAgentServer {
  readonly #agents: Map<string, AIAgent>;
  readonly #threads: McpThreadStore;
  readonly #info: { name: string; version: string };
  readonly #newThreadId: () => string;
  readonly #servers = new Set<Server>();
  /** One turn at a time per thread id. */
  readonly #turns = new SerialByKey();
  #http: HttpServer | undefined;

  constructor(options: McpAgentServerOptions) {
    this.#agents = new Map(Object.entries(options.agents));
    if (this.#agents.size === 0) throw new TypeError('McpAgentServer needs at least one agent: { agents: { helper: agent } }.');
    for (const name of this.#agents.keys()) {
      if (!TOOL_NAME.test(name)) throw new TypeError(`Agent name "${name}" cannot be part of an MCP tool name: use letters, digits, "_" or "-".`);
    }
    this.#threads = options.threads ?? new InMemoryMcpThreadStore();
    this.#info = { name: options.name ?? 'skein', version: options.version ?? '0.1.0' };
    this.#newThreadId = options.newThreadId ?? randomUUID;
  }

  /** Serves one client over any SDK server transport. */
  async connect(transport: Transport): Promise<void> {
    const server = await this.#server();
    await server.connect(transport);
  }

  /** Serves over this process's stdin/stdout until the client disconnects. */
  async serveStdio(): Promise<void> {
    const { StdioServerTransport } = await importSdk(() => import('@modelcontextprotocol/sdk/server/stdio.js'));
    await this.connect(new StdioServerTransport());
  }

  /** Serves Streamable HTTP at `/mcp` (stateless: each request is answered on its own). Resolves with the URL. */
  async listenHttp(options: McpHttpListenOptions = {}): Promise<string> {
    const { StreamableHTTPServerTransport } = await importSdk(() => import('@modelcontextprotocol/sdk/server/streamableHttp.js'));
    const host = options.host ?? '127.0.0.1';
    assertBindable(host, options.expose ?? false, 'The MCP server', '--expose (expose: true)');
    const http = createServer();
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(options.port ?? 0, host, () => resolve());
    });
    const { port } = http.address() as { port: number };
    // Requests are taken only once the port (which the guard checks Host against) is known.
    const guard = new LocalRequestGuard({ port, allowedHosts: options.allowedHosts, allowedHostHint: '--allowed-host (allowedHosts)' });
    http.on('request', (req: IncomingMessage, res: ServerResponse) => {
      // The guard runs before the body is read or any route sees the request.
      const refusal = guard.check(req);
      if (refusal) return sendRefusal(res, refusal);
      void this.#handleHttp(req, res, StreamableHTTPServerTransport);
    });
    this.#http = http;
    return `http://${host.includes(':') ? `[${host}]` : host}:${port}/mcp`;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#servers].map((s) => s.close()));
    this.#servers.clear();
    const http = this.#http;
    this.#http = undefined;
    if (http) await new Promise<void>((resolve) => http.close(() => resolve()));
  }

  async #handleHttp(
    req: IncomingMessage,
    res: ServerResponse,
    Transport: typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js').StreamableHTTPServerTransport,
  ): Promise<void> {
    try {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found: the MCP endpoint is /mcp' }));
        return;
      }
      const transport = new Transport({ sessionIdGenerator: undefined });
      const server = await this.#server();
      res.on('close', () => {
        void transport.close();
        void server.close();
        this.#servers.delete(server);
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.method === 'POST' ? await readJson(req) : undefined);
    } catch (error) {
      if (res.headersSent) return;
      // A body over the limit is a 413 that closes the connection (its rest is not read); a body that is not JSON, a parse error.
      const tooLarge = error instanceof RequestBodyTooLargeError;
      res.writeHead(tooLarge ? 413 : 400, { 'content-type': 'application/json', ...(tooLarge ? { connection: 'close' } : {}) }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: tooLarge ? -32600 : -32700, message: (error as Error).message }, id: null }));
    }
  }

  async #server(): Promise<Server> {
    const [{ Server: McpServerClass }, types] = await Promise.all([
      importSdk<ServerModule>(() => import('@modelcontextprotocol/sdk/server/index.js')),
      importSdk<TypesModule>(() => import('@modelcontextprotocol/sdk/types.js')),
    ]);
    const server = new McpServerClass(this.#info, { capabilities: { tools: {} } });
    server.setRequestHandler(types.ListToolsRequestSchema, () => ({ tools: [...this.#agents].map(([name, agent]) => this.#toolFor(name, agent)) }));
    server.setRequestHandler(types.CallToolRequestSchema, (request, extra) => this.#call(request.params.name, request.params.arguments ?? {}, extra.signal));
    this.#servers.add(server);
    return server;
  }

  #toolFor(name: string, agent: AIAgent) {
    return {
      name: `ask_${name}`,
      description: `Send a message to the agent "${agent.name ?? name}"${agent.description ? ` (${agent.description})` : ''} and get its reply. Pass the returned thread id as "thread" to continue the conversation.`,
      inputSchema: {
        type: 'object' as const,
        properties: {
          input: { type: 'string', description: 'The message to the agent (may be empty when "approvals" answers the agent).' },
          thread: { type: 'string', description: 'A thread id from an earlier reply, to continue that conversation; omit to start a new one.' },
          approvals: {
            type: 'array',
            description: 'Answers to the approvalRequests of the previous reply on this thread: each call runs once when approved; a call left out is declined.',
            items: {
              type: 'object',
              properties: { callId: { type: 'string' }, approved: { type: 'boolean' }, reason: { type: 'string' } },
              required: ['callId', 'approved'],
            },
          },
        },
        required: ['input'],
      },
      outputSchema: {
        type: 'object' as const,
        properties: { reply: { type: 'string' }, thread: { type: 'string' }, approvalRequests: { type: 'array', items: { type: 'object' } } },
        required: ['reply', 'thread'],
      },
    };
  }

  async #call(toolName: string, args: Record<string, unknown>, signal: AbortSignal) {
    const agentName = toolName.startsWith('ask_') ? toolName.slice(4) : undefined;
    const agent = agentName === undefined ? undefined : this.#agents.get(agentName);
    if (!agent || agentName === undefined) return errorResult(`Unknown tool "${toolName}"; tools: ${[...this.#agents.keys()].map((n) => `ask_${n}`).join(', ')}.`);
    if (typeof args.input !== 'string') return errorResult(`"input" must be a string (the message to the agent), found ${JSON.stringify(args.input)}.`);
    if (args.thread !== undefined && typeof args.thread !== 'string') return errorResult(`"thread" must be a thread id string from an earlier reply, found ${JSON.stringify(args.thread)}.`);
    const answers = approvalAnswers(args.approvals);
    if (typeof answers === 'string') return errorResult(answers);
    if (answers.length && args.thread === undefined) return errorResult('"approvals" answers the approval requests of a conversation: pass its "thread" id too.');
    if (!answers.length && args.input === '') return errorResult('"input" is empty: send a message, or answer approval requests with "approvals".');
    const input = args.input;
    const threadId = args.thread ?? this.#newThreadId();
    // One turn at a time per conversation: two calls on one thread id would otherwise both start from the same history.
    return this.#turns.run(threadId, async () => {
      let thread: AgentThread;
      try {
        thread = args.thread === undefined ? agent.getNewThread() : await this.#savedThread(agent, threadId);
      } catch (error) {
        return errorResult((error as Error).message);
      }
      let message: string | ChatMessage = input;
      if (answers.length) {
        const answered = answerMessage(thread, answers, input);
        if (typeof answered === 'string') return errorResult(answered);
        message = answered;
      }
      try {
        const response = await agent.run(message, { thread, signal });
        await this.#threads.save(threadId, agentName, await thread.serialize());
        const approvalRequests = response.approvalRequests.map((r) => ({ callId: r.callId, name: r.name, arguments: r.arguments }));
        const note = approvalRequests.length
          ? `\n\n(The agent wants to call ${approvalRequests.map((r) => `${r.name} [callId ${r.callId}]`).join(', ')}, which needs approval: call ask_${agentName} again with this thread and "approvals": [{ "callId": "...", "approved": true }]; a new message without them declines the calls.)`
          : '';
        return {
          content: [{ type: 'text' as const, text: `${response.text}${note}` }],
          structuredContent: { reply: response.text, thread: threadId, ...(approvalRequests.length ? { approvalRequests } : {}) },
        };
      } catch (error) {
        // What the agent kept of the failed turn (e.g. an approved call's result, so it never runs twice) must outlive this call.
        if (args.thread !== undefined) await this.#threads.save(threadId, agentName, await thread.serialize()).catch(() => undefined);
        return errorResult(`The agent "${agentName}" failed: ${(error as Error).message}`);
      }
    });
  }

  async #savedThread(agent: AIAgent, id: string): Promise<AgentThread> {
    const saved = await this.#threads.load(id);
    if (!saved) throw new Error(`No thread "${id}"; omit "thread" to start a new conversation.`);
    return agent.deserializeThread(saved);
  }
}

interface ApprovalAnswer {
  callId: string;
  approved: boolean;
  reason?: string;
}

/** The `approvals` argument checked, or what is wrong with it. */
function approvalAnswers(value: unknown): ApprovalAnswer[] | string {
  if (value === undefined) return [];
  const expected = '"approvals" must be a list of { "callId": string, "approved": boolean, "reason"?: string }';
  if (!Array.isArray(value)) return `${expected}, found ${JSON.stringify(value)}.`;
  const answers: ApprovalAnswer[] = [];
  for (const item of value as unknown[]) {
    const entry = item as Partial<Record<keyof ApprovalAnswer, unknown>> | null;
    const valid = entry !== null && typeof entry === 'object' && typeof entry.callId === 'string' && typeof entry.approved === 'boolean' && (entry.reason === undefined || typeof entry.reason === 'string');
    if (!valid) return `${expected}, found ${JSON.stringify(item)}.`;
    answers.push({ callId: entry.callId as string, approved: entry.approved as boolean, ...(entry.reason !== undefined ? { reason: entry.reason as string } : {}) });
  }
  return answers;
}

/** The user message that answers the thread's waiting approval requests (plus any text), or why it cannot. */
function answerMessage(thread: AgentThread, answers: readonly ApprovalAnswer[], text: string): ChatMessage | string {
  const waiting = waitingApprovalsOf(thread);
  const unknown = answers.filter((a) => !waiting.some((w) => w.callId === a.callId));
  if (unknown.length) {
    const ids = waiting.map((w) => `${w.callId} (${w.name})`);
    return `No approval request ${unknown.map((a) => `"${a.callId}"`).join(', ')} is waiting on this thread; waiting: ${ids.length ? ids.join(', ') : 'none'}.`;
  }
  const contents: AIContent[] = answers.map((a): FunctionApprovalResponseContent => ({ kind: 'function-approval-response', callId: a.callId, approved: a.approved, ...(a.reason !== undefined ? { reason: a.reason } : {}) }));
  if (text) contents.push({ kind: 'text', text });
  return { role: 'user', contents };
}

function errorResult(text: string) {
  return { content: [{ type: 'text' as const, text }], isError: true };
}

/** MCP's limit on a request body (4 MiB). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

async function readJson(req: IncomingMessage): Promise<unknown> {
  return JSON.parse((await readRequestBody(req, MAX_BODY_BYTES)).toString('utf8'));
}
