import type { ChatMessage } from '../messages/chat-message.js';
import type { AIContent, FunctionCallContent, FunctionResultContent, HostedMcpCallContent } from '../messages/content.js';

/** One line for a tool call, as chat shows it and `threads show` lists it. */
export function formatToolCall(call: FunctionCallContent): string {
  return `[tool call] ${call.name} ${call.arguments || '{}'}`;
}

/** One line for a tool result; `name` when the call is known. */
export function formatToolResult(result: FunctionResultContent, name?: string): string {
  const label = name ?? result.callId;
  if (result.error !== undefined) return `[tool error] ${label}: ${oneLine(result.error)}`;
  return `[tool result] ${label}: ${oneLine(JSON.stringify(result.result ?? null))}`;
}

/**
 * A call the AI service made to a hosted MCP server, as the two lines of a local call and its
 * result, the call line naming the server (the service, not this process, ran it).
 */
export function formatHostedMcpCall(call: HostedMcpCallContent): [string, string] {
  const outcome = call.error !== undefined ? `[tool error] ${call.name}: ${oneLine(call.error)}` : `[tool result] ${call.name}: ${oneLine(JSON.stringify(call.result ?? null))}`;
  return [`[tool call] ${call.name} ${call.arguments || '{}'} (MCP server "${call.serverLabel}", called by the service)`, outcome];
}

/** A content part as text for `threads show`; `callNames` maps call ids to tool names. */
export function formatContent(content: AIContent, callNames?: ReadonlyMap<string, string>): string {
  switch (content.kind) {
    case 'text':
      return content.text;
    case 'function-call':
      return formatToolCall(content);
    case 'function-result':
      return formatToolResult(content, callNames?.get(content.callId));
    case 'hosted-mcp-call':
      return formatHostedMcpCall(content).join('\n');
    case 'hosted-mcp-tools':
      return `[MCP tools listed by the service] ${content.serverLabel}: ${content.error !== undefined ? `error: ${oneLine(content.error)}` : content.tools.map((t) => t.name).join(', ') || 'none'}`;
    case 'function-approval-request':
      return `[approval request] ${content.name} ${content.arguments || '{}'}`;
    case 'function-approval-response':
      return `[approval ${content.approved ? 'granted' : 'denied'}]${content.reason ? ` ${content.reason}` : ''}`;
    case 'usage':
      return `[usage] ${JSON.stringify(content.usage)}`;
    case 'error':
      return `[error] ${content.message}`;
    case 'reasoning':
      return `[reasoning] ${content.text}`;
    case 'uri':
      return `[uri] ${content.uri}`;
    case 'data':
      return `[data ${content.mediaType}, ${content.data.length} base64 chars]`;
    default:
      return `[${(content as { kind: string }).kind}]`;
  }
}

/** `role (author) at: contents`, one content part per line after the first. */
export function formatMessage(message: ChatMessage, index: number, callNames?: ReadonlyMap<string, string>): string {
  const author = message.authorName ? ` (${message.authorName})` : '';
  const at = message.createdAt ? ` ${message.createdAt}` : '';
  const parts = message.contents.map((c) => formatContent(c, callNames));
  const head = `#${index + 1} ${message.role}${author}${at}:`;
  if (parts.length === 1 && !parts[0]!.includes('\n')) return `${head} ${parts[0]}`;
  return [head, ...parts.map((p) => indent(p))].join('\n');
}

/** Tool names by call id over a whole history, so results can name their tool. */
export function toolNamesByCallId(messages: readonly ChatMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) for (const c of m.contents) if (c.kind === 'function-call' || c.kind === 'function-approval-request') names.set(c.callId, c.name);
  return names;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
