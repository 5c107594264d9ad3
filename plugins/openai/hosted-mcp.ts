import type OpenAI from 'openai';
import { ConfigurationError } from 'skein';

/**
 * An MCP server the Responses service calls itself (a `type: "mcp"` tool): the service lists
 * its tools and calls them during the response; nothing runs in this process.
 */
export interface HostedMcpServer {
  /** The server's label, unique within the agent (`server_label`). */
  label: string;
  /** The server's Streamable HTTP URL, reachable from the service (`server_url`). */
  url: string;
  /** Headers the service sends to the server (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** Only these of the server's tools are offered to the model; all when absent. */
  allowedTools?: string[];
  /**
   * Which calls the service asks about first (`require_approval`): `'always'` (the service's
   * default when absent), `'never'`, or `{ never: ['tool', ...] }` (these run unasked, the rest
   * ask). A request becomes one of the run's `approvalRequests`, answered with `approvalResponse`.
   */
  requireApproval?: HostedMcpApproval;
}

export type HostedMcpApproval = 'always' | 'never' | { never: string[] };

/** The agent option (config key and `additionalProperties` key) that holds the servers. */
export const HOSTED_MCP_OPTION = 'hostedMcp';

const KEYS = new Set(['label', 'url', 'headers', 'allowedTools', 'requireApproval']);

/** A hosted MCP server, checked now: `additionalProperties: { hostedMcp: [hostedMcp({...})] }`. */
export function hostedMcp(server: HostedMcpServer): HostedMcpServer {
  return checkedServer(server, `${HOSTED_MCP_OPTION}[0]`);
}

/** The `hostedMcp` option as Responses `mcp` tools; a bad entry is a ConfigurationError naming it. */
export function hostedMcpTools(option: unknown): OpenAI.Responses.Tool.Mcp[] {
  if (option === undefined) return [];
  if (!Array.isArray(option)) {
    throw new ConfigurationError(`${HOSTED_MCP_OPTION}: expected an array of { label, url, headers?, allowedTools?, requireApproval? }, got ${JSON.stringify(option)}.`);
  }
  const servers = option.map((entry, index) => checkedServer(entry, `${HOSTED_MCP_OPTION}[${index}]`));
  const labels = servers.map((s) => s.label);
  const repeated = labels.find((label, index) => labels.indexOf(label) !== index);
  if (repeated !== undefined) throw new ConfigurationError(`${HOSTED_MCP_OPTION}: the label "${repeated}" is used twice; give each server its own label.`);
  return servers.map((s) => ({
    type: 'mcp',
    server_label: s.label,
    server_url: s.url,
    ...(s.headers ? { headers: s.headers } : {}),
    ...(s.allowedTools ? { allowed_tools: s.allowedTools } : {}),
    ...(s.requireApproval !== undefined ? { require_approval: wireApproval(s.requireApproval) } : {}),
  }));
}

function wireApproval(approval: HostedMcpApproval): NonNullable<OpenAI.Responses.Tool.Mcp['require_approval']> {
  return typeof approval === 'string' ? approval : { never: { tool_names: approval.never } };
}

/**
 * The config check of the `hostedMcp` agent key (the plugin's `checkAgentOptions`): only
 * `openai-responses` agents take it, and each entry must be a valid server.
 */
export function hostedMcpOptionProblems(client: string, options: Readonly<Record<string, unknown>>): { key: string; problem: string }[] {
  if (options[HOSTED_MCP_OPTION] === undefined) return [];
  if (client !== 'openai-responses') {
    return [{ key: HOSTED_MCP_OPTION, problem: `only "openai-responses" agents hand MCP servers to the service; this agent's client is "${client}". Use a local MCP server (the mcp plugin's "mcp:<server>" tools) instead.` }];
  }
  try {
    hostedMcpTools(options[HOSTED_MCP_OPTION]);
    return [];
  } catch (error) {
    return [{ key: HOSTED_MCP_OPTION, problem: (error as Error).message }];
  }
}

function checkedServer(entry: unknown, at: string): HostedMcpServer {
  const fail = (problem: string): never => {
    throw new ConfigurationError(`${at}: ${problem} (a hosted MCP server is { label, url, headers?, allowedTools?, requireApproval? }).`);
  };
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return fail(`expected an object, got ${JSON.stringify(entry)}`);
  const server = entry as Record<string, unknown>;
  const unknownKey = Object.keys(server).find((key) => !KEYS.has(key));
  if (unknownKey !== undefined) fail(`unknown key "${unknownKey}"`);
  if (typeof server.label !== 'string' || !/^[A-Za-z0-9_-]+$/.test(server.label)) fail(`"label" must be a non-empty string of letters, digits, _ or -, got ${JSON.stringify(server.label)}`);
  if (typeof server.url !== 'string' || !isHttpUrl(server.url)) fail(`"url" must be an http(s) URL, got ${JSON.stringify(server.url)}`);
  if (server.headers !== undefined && !isStringRecord(server.headers)) fail('"headers" must be an object of string values');
  if (server.allowedTools !== undefined && !(Array.isArray(server.allowedTools) && server.allowedTools.every((t) => typeof t === 'string'))) {
    fail('"allowedTools" must be an array of tool names');
  }
  if (server.requireApproval !== undefined && !isApproval(server.requireApproval)) {
    fail(`"requireApproval" must be "always", "never" or { never: [tool names] }, got ${JSON.stringify(server.requireApproval)}`);
  }
  return server as unknown as HostedMcpServer;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return !!value && typeof value === 'object' && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}

function isApproval(value: unknown): value is HostedMcpApproval {
  if (value === 'always' || value === 'never') return true;
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const { never, ...rest } = value as Record<string, unknown>;
  return Object.keys(rest).length === 0 && Array.isArray(never) && never.every((t) => typeof t === 'string');
}
