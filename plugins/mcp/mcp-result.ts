import type { FunctionResultContent, JsonObject, JsonValue } from 'skein';

/** The parts of an MCP `CallToolResult` Skein reads (the SDK's type, without depending on it at import). */
export interface McpCallResult {
  content?: McpContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export type McpContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
  | { type: 'resource_link'; uri: string; name: string; title?: string; description?: string; mimeType?: string }
  | { type: string; [field: string]: unknown };

/**
 * An MCP tool result as the model and the thread see it:
 * - only text: the text (blocks joined by a blank line), like a local tool returning a string;
 * - otherwise `{ content: [...], structuredContent? }`, where text and resource links stay as they
 *   are, an embedded text resource keeps its text, and binary data (images, audio, blob resources)
 *   is described (type, media type, size) rather than sent as base64 text. The binary data itself
 *   is kept on the result's `additionalProperties.mcpData` (`[{ mediaType, data }]`) for the app;
 * - `isError`: an error result with the server's text, so the model can react.
 */
export function toFunctionResult(callId: string, toolName: string, result: McpCallResult): FunctionResultContent {
  const blocks = result.content ?? [];
  if (result.isError) {
    const text = blocks.filter(isText).map((b) => b.text).join('\n\n');
    return { kind: 'function-result', callId, error: text || `${toolName} reported an error without a message.` };
  }
  const binary: JsonObject[] = [];
  const described = blocks.map((block) => describe(block, binary));
  const onlyText = blocks.length > 0 && blocks.every(isText) && result.structuredContent === undefined;
  const value: JsonValue = onlyText
    ? blocks.map((b) => (b as { text: string }).text).join('\n\n')
    : { content: described, ...(result.structuredContent !== undefined ? { structuredContent: toJson(result.structuredContent) } : {}) };
  const out: FunctionResultContent = { kind: 'function-result', callId, result: value };
  if (binary.length) out.additionalProperties = { mcpData: binary };
  return out;
}

function isText(block: McpContentBlock): block is { type: 'text'; text: string } {
  return block.type === 'text' && typeof (block as { text?: unknown }).text === 'string';
}

function describe(block: McpContentBlock, binary: JsonObject[]): JsonObject {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: String((block as { text: unknown }).text) };
    case 'image':
    case 'audio': {
      const { data, mimeType } = block as { data: string; mimeType: string };
      binary.push({ mediaType: mimeType, data });
      return { type: block.type, mimeType, bytes: base64Size(data) };
    }
    case 'resource': {
      const { uri, mimeType, text, blob } = (block as { resource: { uri: string; mimeType?: string; text?: string; blob?: string } }).resource;
      if (typeof text === 'string') return dropUndefined({ type: 'resource', uri, mimeType, text });
      if (typeof blob === 'string') binary.push(dropUndefined({ mediaType: mimeType ?? 'application/octet-stream', data: blob, uri }));
      return dropUndefined({ type: 'resource', uri, mimeType, bytes: typeof blob === 'string' ? base64Size(blob) : undefined });
    }
    case 'resource_link': {
      const { uri, name, title, description, mimeType } = block as { uri: string; name: string; title?: string; description?: string; mimeType?: string };
      return dropUndefined({ type: 'resource_link', uri, name, title, description, mimeType });
    }
    default:
      return toJson(block) as JsonObject;
  }
}

function base64Size(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

function dropUndefined(fields: Record<string, JsonValue | undefined>): JsonObject {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as JsonObject;
}

function toJson(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value ?? null)) as JsonValue;
}
