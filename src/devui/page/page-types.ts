/** What the page's scripts read from the Dev UI's API, besides the wire types the server declares (devui-api-types). */

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

export type Content =
  | { kind: 'text'; text: string }
  | { kind: 'function-call'; callId: string; name: string; arguments: string }
  | { kind: 'function-result'; callId: string; result?: unknown; error?: string }
  | { kind: 'usage'; usage: Usage }
  | { kind: string; [key: string]: unknown };

export interface ViewMessage {
  role: string;
  authorName?: string;
  createdAt?: string;
  contents: Content[];
}

/** Where a tool runs when it is not a local function (an MCP server). */
export interface ToolSourceInfo {
  kind: string;
  server?: string;
  name?: string;
}

/** A tool of the selected agent, with the JSON Schema of its arguments. */
export interface ToolInfo {
  name: string;
  description?: string;
  parameters: JsonSchema;
  requiresApproval: boolean;
  source?: ToolSourceInfo;
}

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  default?: unknown;
}
