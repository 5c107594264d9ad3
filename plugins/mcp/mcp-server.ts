import type { AITool, AIToolSet } from 'skein';
import { McpConnection, type McpToolInfo } from './mcp-connection.js';
import { type McpServerConfig, globToRegExp } from './mcp-server-config.js';
import { McpTool } from './mcp-tool.js';

/** `mcpServer({ name, ... })`: a server config with the name errors and tool references use. */
export type McpServerOptions = McpServerConfig & { name: string };

/**
 * An MCP server's tools as an agent's tool set: listed at the start of each run (cached until
 * the server reports a change), filtered by allow/deny lists, prefixed, and marked for approval
 * as configured. Views made with `select` share this server's connection.
 */
export class McpServer implements AIToolSet {
  readonly kind = 'tool-set' as const;
  readonly connection: McpConnection;
  readonly #only: RegExp | undefined;
  readonly #allow: RegExp[] | undefined;
  readonly #deny: RegExp[];
  readonly #approval: 'all' | 'none' | RegExp[];
  #listed: { infos: McpToolInfo[]; tools: McpTool[] } | undefined;

  constructor(connection: McpConnection, only?: string) {
    this.connection = connection;
    const config = connection.config;
    this.#only = only === undefined ? undefined : globToRegExp(only);
    this.#allow = config.allowTools?.map(globToRegExp);
    this.#deny = (config.denyTools ?? []).map(globToRegExp);
    const approval = config.requiresApproval ?? 'none';
    this.#approval = Array.isArray(approval) ? approval.map(globToRegExp) : approval;
  }

  get name(): string {
    return `mcp:${this.connection.name}`;
  }

  /** The same server (and connection), offering only the tools whose server name matches `pattern` (`*` wildcards). */
  select(pattern: string): McpServer {
    return new McpServer(this.connection, pattern);
  }

  async listTools(signal?: AbortSignal): Promise<readonly AITool[]> {
    const infos = await this.connection.listTools(signal);
    // The same McpTool objects until the list changes: declarations stay identical between runs.
    if (this.#listed?.infos !== infos) this.#listed = { infos, tools: infos.filter((info) => this.#offers(info.name)).map((info) => this.#toTool(info)) };
    return this.#listed.tools;
  }

  /** Closes the connection (stops a stdio server); the next run reconnects. */
  close(): Promise<void> {
    return this.connection.close();
  }

  #offers(toolName: string): boolean {
    if (this.#only && !this.#only.test(toolName)) return false;
    if (this.#allow && !this.#allow.some((r) => r.test(toolName))) return false;
    return !this.#deny.some((r) => r.test(toolName));
  }

  #toTool(info: McpToolInfo): McpTool {
    const approval = this.#approval === 'all' || (Array.isArray(this.#approval) && this.#approval.some((r) => r.test(info.name)));
    return new McpTool(this.connection, info, exposedName(this.connection.config.toolPrefix ?? '', info.name), approval);
  }
}

/** Model-facing names allow letters, digits, `_` and `-` (64 at most); MCP names may hold more (`.`, `/`). */
function exposedName(prefix: string, toolName: string): string {
  return (prefix + toolName.replace(/[^a-zA-Z0-9_-]/g, '_')).slice(0, 64);
}

/**
 * An MCP server as an agent's tools. It connects on the first run that needs it and keeps one
 * connection; call `close()` when done (a container closes the servers it made). Add
 * `mcpToolImages()` to the agent's chat-client middleware so the model sees images tools return.
 *
 * @example
 * const files = mcpServer({ name: 'files', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', './docs'] });
 * const agent = new ChatAgent({ chatClient, tools: [files], middleware: { chatClient: [mcpToolImages()] } });
 * console.log((await agent.run('list the docs folder')).text);
 * await files.close();
 */
export function mcpServer(options: McpServerOptions): McpServer {
  const { name, ...config } = options;
  return new McpServer(new McpConnection(name, config as McpServerConfig));
}
