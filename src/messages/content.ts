import type { JsonObject, JsonValue } from '../serialization/json.js';

/** Fields every content kind may carry: provider-specific extras that must survive a round trip. */
export interface ContentBase {
  /** Provider data kept verbatim (e.g. a Responses item id). JSON only. */
  additionalProperties?: JsonObject;
}

export interface TextContent extends ContentBase {
  readonly kind: 'text';
  text: string;
}

/** Inline binary data, base64-encoded. */
export interface DataContent extends ContentBase {
  readonly kind: 'data';
  data: string;
  mediaType: string;
}

export interface UriContent extends ContentBase {
  readonly kind: 'uri';
  uri: string;
  mediaType?: string;
}

/** A call the model asked for. `arguments` is the JSON text exactly as the model produced it. */
export interface FunctionCallContent extends ContentBase {
  readonly kind: 'function-call';
  callId: string;
  name: string;
  arguments: string;
}

/** The outcome of a function call: a JSON result, or an error message the model can read. */
export interface FunctionResultContent extends ContentBase {
  readonly kind: 'function-result';
  callId: string;
  result?: JsonValue;
  error?: string;
}

export interface UsageDetails {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

export interface UsageContent extends ContentBase {
  readonly kind: 'usage';
  usage: UsageDetails;
}

export interface ErrorContent extends ContentBase {
  readonly kind: 'error';
  message: string;
  code?: string;
}

export interface ReasoningContent extends ContentBase {
  readonly kind: 'reasoning';
  text: string;
}

/** A call to a tool marked `requiresApproval`: the run stopped to ask the user. */
export interface FunctionApprovalRequestContent extends ContentBase {
  readonly kind: 'function-approval-request';
  callId: string;
  name: string;
  arguments: string;
}

/** The user's answer to an approval request, sent as (part of) the next run's input. */
export interface FunctionApprovalResponseContent extends ContentBase {
  readonly kind: 'function-approval-response';
  callId: string;
  approved: boolean;
  reason?: string;
}

/**
 * A call of a tool on an MCP server that the AI service made itself (a hosted MCP server, e.g.
 * a Responses `mcp_call` item), with its outcome. Shown like a local call and its result; the
 * agent never runs it and never answers it (it is not a `function-call`).
 */
export interface HostedMcpCallContent extends ContentBase {
  readonly kind: 'hosted-mcp-call';
  /** The service's id for the call (`mcp_...`). */
  callId: string;
  /** The label the agent gave the server. */
  serverLabel: string;
  name: string;
  /** The JSON text of the arguments, as the model produced it. */
  arguments: string;
  /** The tool's output (text), when the call succeeded. */
  result?: string;
  /** Why the call failed (the tool's error result or the service's), when it did. */
  error?: string;
  /** The `function-approval-request` this call was approved through, when one was asked. */
  approvalRequestId?: string;
}

/** One tool a hosted MCP server listed, in MCP's shape (`inputSchema` is the tool's JSON Schema). */
export interface HostedMcpTool {
  name: string;
  description?: string;
  inputSchema: JsonValue;
  annotations?: JsonValue;
}

/**
 * The tools the AI service listed from a hosted MCP server (a Responses `mcp_list_tools` item).
 * Not for display: kept so a thread whose history Skein keeps can send it back, and the service
 * need not list the tools again.
 */
export interface HostedMcpToolsContent extends ContentBase {
  readonly kind: 'hosted-mcp-tools';
  /** The service's id for the listing (`mcpl_...`). */
  listId: string;
  serverLabel: string;
  tools: HostedMcpTool[];
  /** Why the server's tools could not be listed, when they could not. */
  error?: string;
}

/**
 * The content kinds, by discriminator. Plugins add their own kinds by augmenting this interface
 * (`declare module 'skein' { interface ContentKinds { 'x-image-ref': ImageRef } }`) and registering
 * a validator for the kind in the serialization registry.
 */
export interface ContentKinds {
  text: TextContent;
  data: DataContent;
  uri: UriContent;
  'function-call': FunctionCallContent;
  'function-result': FunctionResultContent;
  usage: UsageContent;
  error: ErrorContent;
  reasoning: ReasoningContent;
  'function-approval-request': FunctionApprovalRequestContent;
  'function-approval-response': FunctionApprovalResponseContent;
  'hosted-mcp-call': HostedMcpCallContent;
  'hosted-mcp-tools': HostedMcpToolsContent;
}

export type AIContent = ContentKinds[keyof ContentKinds];
export type ContentKind = keyof ContentKinds;

export function isText(c: AIContent): c is TextContent {
  return c.kind === 'text';
}
export function isFunctionCall(c: AIContent): c is FunctionCallContent {
  return c.kind === 'function-call';
}
export function isFunctionResult(c: AIContent): c is FunctionResultContent {
  return c.kind === 'function-result';
}
export function isHostedMcpCall(c: AIContent): c is HostedMcpCallContent {
  return c.kind === 'hosted-mcp-call';
}
export function isUsage(c: AIContent): c is UsageContent {
  return c.kind === 'usage';
}

/** Sums usage, keeping a field undefined only when no part reported it. */
export function addUsage(a: UsageDetails | undefined, b: UsageDetails | undefined): UsageDetails | undefined {
  if (!a) return b;
  if (!b) return a;
  const sum = (x?: number, y?: number) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  return {
    inputTokens: sum(a.inputTokens, b.inputTokens),
    outputTokens: sum(a.outputTokens, b.outputTokens),
    totalTokens: sum(a.totalTokens, b.totalTokens),
  };
}

/** What a model reads as the result of a call: the error, the string result, or its JSON. */
export function functionResultText(result: FunctionResultContent): string {
  if (result.error !== undefined) return `Error: ${result.error}`;
  if (typeof result.result === 'string') return result.result;
  return JSON.stringify(result.result ?? null);
}
