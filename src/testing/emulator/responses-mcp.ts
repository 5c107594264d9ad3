import type { ModelTool } from './emulated-model.js';
import type { IdGenerator } from './id-generator.js';
import { InvalidRequestError, isRecord } from './invalid-request-error.js';
import type { StoredItem } from './stored-item.js';

/** A Responses `type: "mcp"` tool as the request gave it. */
export interface HostedMcpTool {
  serverLabel: string;
  serverUrl: string;
  headers: Record<string, string>;
  allowedTools: string[] | undefined;
  /** Whether the service asks before calling this tool (`require_approval`; "always" when absent). */
  needsApproval(name: string): boolean;
}

/** A server's tools, listed for this response. */
export interface HostedMcpServer {
  tool: HostedMcpTool;
  tools: ModelTool[];
}

/** The `type: "mcp"` tools of a request, validated as the service does (label and URL required). */
export function hostedMcpTools(rawTools: readonly unknown[]): HostedMcpTool[] {
  const tools: HostedMcpTool[] = [];
  rawTools.forEach((tool, index) => {
    if (!isRecord(tool) || tool.type !== 'mcp') return;
    const param = `tools[${index}]`;
    if (typeof tool.server_label !== 'string' || typeof tool.server_url !== 'string') {
      throw new InvalidRequestError(`${param}: an mcp tool needs server_label and server_url (strings).`, param);
    }
    const needsApproval = approvalRule(tool.require_approval, `${param}.require_approval`);
    const allowed = tool.allowed_tools;
    tools.push({
      serverLabel: tool.server_label,
      serverUrl: tool.server_url,
      headers: isRecord(tool.headers) ? (tool.headers as Record<string, string>) : {},
      allowedTools: Array.isArray(allowed) ? allowed.map(String) : isRecord(allowed) && Array.isArray(allowed.tool_names) ? allowed.tool_names.map(String) : undefined,
      needsApproval,
    });
  });
  return tools;
}

/** `require_approval`: "always" (also when absent), "never", or { always?, never?: { tool_names } } (unnamed tools ask). */
function approvalRule(value: unknown, param: string): (name: string) => boolean {
  if (value === undefined || value === null || value === 'always') return () => true;
  if (value === 'never') return () => false;
  const names = (filter: unknown) => (isRecord(filter) && Array.isArray(filter.tool_names) ? filter.tool_names.map(String) : []);
  if (!isRecord(value) || Object.keys(value).some((k) => k !== 'always' && k !== 'never')) {
    throw new InvalidRequestError(`${param} must be "always", "never" or {always?, never?: {tool_names}}.`, param);
  }
  const never = names(value.never);
  return (name) => !never.includes(name);
}

/**
 * Connects to the server as a real MCP client (Streamable HTTP), runs `use`, and disconnects.
 * The SDK is loaded on first use: only tests that hand the emulator an MCP server need it.
 */
async function withClient<T>(tool: HostedMcpTool, use: (client: import('@modelcontextprotocol/sdk/client/index.js').Client) => Promise<T>): Promise<T> {
  const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  const client = new Client({ name: 'skein-emulator', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(tool.serverUrl), { requestInit: { headers: tool.headers } }));
  } catch (error) {
    // The service answers an unreachable server with 424 (failed dependency).
    throw new InvalidRequestError(
      `Error retrieving tool list from MCP server: '${tool.serverLabel}'. ${error instanceof Error ? error.message : String(error)}`,
      'tools',
      424,
      'http_error',
    );
  }
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** Lists a server's tools (only the allowed ones) and the `mcp_list_tools` item that records them. */
export async function listHostedTools(tool: HostedMcpTool, ids: IdGenerator): Promise<{ server: HostedMcpServer; item: StoredItem }> {
  const listed = await withClient(tool, async (client) => (await client.listTools()).tools);
  const allowed = listed.filter((t) => !tool.allowedTools || tool.allowedTools.includes(t.name));
  const item: StoredItem = {
    id: ids.next('mcpl_'),
    type: 'mcp_list_tools',
    server_label: tool.serverLabel,
    tools: allowed.map((t) => ({ name: t.name, description: t.description ?? null, input_schema: t.inputSchema, annotations: t.annotations ?? null })),
    error: null,
  };
  const tools = allowed.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.inputSchema as Record<string, unknown> }));
  return { server: { tool, tools }, item };
}

/** A server's tools as an `mcp_list_tools` item in context lists them (only the allowed ones); the server is not asked. */
export function knownHostedTools(tool: HostedMcpTool, item: StoredItem): HostedMcpServer {
  const listed = (item.tools as Record<string, unknown>[]).filter((t) => !tool.allowedTools || tool.allowedTools.includes(String(t.name)));
  const tools = listed.map((t) => ({
    name: String(t.name),
    ...(typeof t.description === 'string' && t.description ? { description: t.description } : {}),
    parameters: t.input_schema as Record<string, unknown>,
  }));
  return { tool, tools };
}

/** Calls a tool on its server: the `mcp_call` item, with the text of the result or the error. */
export async function callHostedTool(tool: HostedMcpTool, name: string, args: string, ids: IdGenerator, approvalRequestId?: string): Promise<StoredItem> {
  let output: string | null = null;
  let error: string | null = null;
  try {
    const parsed: unknown = args.trim() ? JSON.parse(args) : {};
    const result = await withClient(tool, (client) => client.callTool({ name, arguments: isRecord(parsed) ? parsed : {} }));
    const text = (Array.isArray(result.content) ? result.content : [])
      .map((part: unknown) => (isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
      .join('');
    if (result.isError) error = text;
    else output = text;
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
  }
  return {
    id: ids.next('mcp_'),
    type: 'mcp_call',
    server_label: tool.serverLabel,
    name,
    arguments: args,
    output,
    error,
    status: error === null ? 'completed' : 'failed',
    ...(approvalRequestId ? { approval_request_id: approvalRequestId } : {}),
  };
}

/** The request the service makes instead of a call that needs the user's approval. */
export function approvalRequestItem(tool: HostedMcpTool, name: string, args: string, ids: IdGenerator): StoredItem {
  return { id: ids.next('mcpr_'), type: 'mcp_approval_request', server_label: tool.serverLabel, name, arguments: args };
}
