import { AbortError, type AITool, type FunctionResultContent, type JsonObject, readCallArguments, type ToolDeclaration, type ToolInvocationContext, type ToolSource } from 'skein';
import type { McpConnection, McpToolInfo } from './mcp-connection.js';
import { McpConnectionError, McpTimeoutError } from './mcp-errors.js';
import { toFunctionResult } from './mcp-result.js';

/**
 * One tool of an MCP server as an agent sees it: the server's JSON Schema is the declaration's
 * parameters as is (no round trip through zod), and a call goes to the server over the shared
 * connection. `serverName` and `toolName` say where it comes from (telemetry, Dev UI, logs).
 */
export class McpTool implements AITool {
  readonly declaration: ToolDeclaration;
  readonly requiresApproval: boolean;
  readonly serverName: string;
  /** The name on the server (the declaration's name may carry a prefix). */
  readonly toolName: string;
  readonly source: ToolSource;
  readonly #connection: McpConnection;

  constructor(connection: McpConnection, info: McpToolInfo, exposedName: string, requiresApproval: boolean) {
    this.#connection = connection;
    this.serverName = connection.name;
    this.toolName = info.name;
    this.source = { kind: 'mcp', server: connection.name, name: info.name };
    this.requiresApproval = requiresApproval;
    // `$schema` is dropped, as for local tools: some services refuse it in function parameters.
    const { $schema: _dialect, ...parameters } = info.inputSchema;
    this.declaration = { name: exposedName, description: info.description ?? info.title, parameters: parameters as JsonObject };
  }

  async invoke(context: ToolInvocationContext): Promise<FunctionResultContent> {
    const { callId } = context.call;
    const read = readCallArguments(context.call, this.declaration.name);
    if (!read.ok) return read.result;
    const args = read.value;
    if (!args || typeof args !== 'object' || Array.isArray(args)) {
      return { kind: 'function-result', callId, error: `Invalid arguments for ${this.declaration.name}: expected a JSON object, found ${JSON.stringify(args)}.` };
    }
    try {
      const result = await this.#connection.callTool(this.toolName, args as Record<string, unknown>, context.signal);
      return toFunctionResult(callId, this.declaration.name, result);
    } catch (error) {
      // Aborts, timeouts and a lost server fail the run (typed); a refusal by the server is the model's to read.
      if (context.signal.aborted) throw error instanceof AbortError ? error : new AbortError(undefined, { cause: error });
      if (error instanceof McpConnectionError || error instanceof McpTimeoutError || error instanceof AbortError) throw error;
      return { kind: 'function-result', callId, error: `${this.declaration.name} failed on MCP server "${this.serverName}": ${(error as Error).message}` };
    }
  }
}
