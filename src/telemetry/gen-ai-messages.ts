import type { ChatMessage } from '../messages/chat-message.js';
import type { AIContent } from '../messages/content.js';

/**
 * Messages in the shape of the GenAI conventions' `gen_ai.input.messages` /
 * `gen_ai.output.messages` JSON: `{ role, parts: [{ type, ... }], finish_reason? }`.
 */
export interface GenAIMessage {
  role: string;
  parts: GenAIPart[];
  name?: string;
  finish_reason?: string;
}

export type GenAIPart =
  | { type: 'text'; content: string }
  | { type: 'reasoning'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; response: unknown }
  | { type: 'uri'; uri: string; mime_type?: string }
  | { type: 'blob'; mime_type: string; content: string }
  | { type: string; [key: string]: unknown };

export function toGenAIMessages(messages: readonly ChatMessage[], finishReason?: string): GenAIMessage[] {
  return messages.map((m) => {
    const out: GenAIMessage = { role: m.role, parts: m.contents.flatMap(toPart) };
    if (m.authorName) out.name = m.authorName;
    if (finishReason && m.role === 'assistant') out.finish_reason = finishReason;
    return out;
  });
}

function toPart(content: AIContent): GenAIPart[] {
  switch (content.kind) {
    case 'text':
      return [{ type: 'text', content: content.text }];
    case 'reasoning':
      return [{ type: 'reasoning', content: content.text }];
    case 'function-call':
      return [{ type: 'tool_call', id: content.callId, name: content.name, arguments: parseArguments(content.arguments) }];
    case 'function-result':
      return [{ type: 'tool_call_response', id: content.callId, response: content.error !== undefined ? { error: content.error } : (content.result ?? null) }];
    case 'hosted-mcp-call':
      // A call the service made: the call and its outcome, like a local call and its result.
      return [
        { type: 'tool_call', id: content.callId, name: content.name, arguments: parseArguments(content.arguments), server: content.serverLabel },
        { type: 'tool_call_response', id: content.callId, response: content.error !== undefined ? { error: content.error } : (content.result ?? null) },
      ];
    case 'hosted-mcp-tools':
      return []; // the service's tool listing: not part of the conversation
    case 'uri':
      return [{ type: 'uri', uri: content.uri, ...(content.mediaType ? { mime_type: content.mediaType } : {}) }];
    case 'data':
      return [{ type: 'blob', mime_type: content.mediaType, content: content.data }];
    case 'usage':
      return []; // usage has its own attributes
    default:
      return [{ type: content.kind }];
  }
}

function parseArguments(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw; // the model sent invalid JSON: record what it sent
  }
}
