import { ConfigurationError } from 'skein';
import { McpConnection } from './mcp-connection.js';
import { McpServer } from './mcp-server.js';
import type { McpServerConfig } from './mcp-server-config.js';

/** The `mcp:` tool references of `agents.<name>.tools`: `mcp:<server>` or `mcp:<server>/<tool pattern>`. */
export const MCP_REFERENCE_PREFIX = 'mcp';

export function parseMcpReference(reference: string): { server: string; pattern?: string } {
  const rest = reference.slice(MCP_REFERENCE_PREFIX.length + 1);
  const slash = rest.indexOf('/');
  return slash < 0 ? { server: rest } : { server: rest.slice(0, slash), pattern: rest.slice(slash + 1) };
}

/** A problem with an `mcp:` reference given the configured server names, or undefined. */
export function mcpReferenceProblem(reference: string, servers: readonly string[]): string | undefined {
  const { server, pattern } = parseMcpReference(reference);
  if (!servers.includes(server)) {
    return `"${reference}" names MCP server "${server}", which is not configured; configured servers: ${servers.join(', ') || 'none'} (plugins.mcp.servers).`;
  }
  if (pattern === '') return `"${reference}" has an empty tool pattern; write mcp:${server} for every tool or mcp:${server}/<name or pattern with *>.`;
  return undefined;
}

/**
 * The MCP servers of one container: one `McpServer` (one connection) per configured server,
 * shared by every agent that names it; disposing of the container closes them all.
 */
export class McpServerRegistry {
  readonly #servers = new Map<string, McpServer>();

  constructor(configs: Readonly<Record<string, McpServerConfig>>) {
    for (const [name, config] of Object.entries(configs)) this.#servers.set(name, new McpServer(new McpConnection(name, config)));
  }

  get names(): string[] {
    return [...this.#servers.keys()];
  }

  /** The server named in config; a ConfigurationError names the configured ones otherwise. */
  get(name: string): McpServer {
    const server = this.#servers.get(name);
    if (!server) throw new ConfigurationError(`No MCP server named "${name}"; configured servers: ${this.names.join(', ') || 'none'}.`);
    return server;
  }

  /** `mcp:files` -> the server's tool set; `mcp:search/web_*` -> only its matching tools. */
  resolve(reference: string): McpServer {
    const problem = mcpReferenceProblem(reference, this.names);
    if (problem) throw new ConfigurationError(problem);
    const { server, pattern } = parseMcpReference(reference);
    return pattern === undefined ? this.get(server) : this.get(server).select(pattern);
  }

  /** Closes every connection for good (container disposal). */
  async dispose(): Promise<void> {
    await Promise.all([...this.#servers.values()].map((s) => s.connection.dispose()));
  }
}
