import type { ContentPart, Message, ToolCall } from '@ag-ui/core';
import { type AIContent, type ChatMessage, type FunctionResultContent, functionResultText } from 'skein';

/** Where a tool result content keeps the id of the AG-UI tool message it came from (a frontend tool's result). */
export const AG_UI_MESSAGE_ID = 'agUiMessageId';

/** The AG-UI view of a Skein history, and for each AG-UI message the index of the Skein message it comes from. */
export interface AgUiView {
  messages: Message[];
  /** `source[i]` is the index in the Skein history of the message `messages[i]` was made from. */
  source: number[];
}

/** The AG-UI id of a tool result: the client's own id for a frontend tool's result, else one made from the call id. */
export function resultMessageId(result: FunctionResultContent): string {
  const given = result.additionalProperties?.[AG_UI_MESSAGE_ID];
  return typeof given === 'string' ? given : `${result.callId}-result`;
}

/**
 * A Skein history as AG-UI messages (see docs/ag-ui.md, "Messages"): user, system and assistant
 * messages one to one (text; an assistant's function calls as `toolCalls`), each tool result its
 * own `tool` message. Ids: the message's `messageId`, else `skein-<index>`; a repeated id gets a
 * `~<n>` suffix. Contents AG-UI has no message for (usage, reasoning, approvals) are left out.
 */
export function toAgUiView(history: readonly ChatMessage[]): AgUiView {
  const messages: Message[] = [];
  const source: number[] = [];
  const seen = new Set<string>();
  const unique = (id: string): string => {
    let candidate = id;
    for (let n = 2; seen.has(candidate); n++) candidate = `${id}~${n}`;
    seen.add(candidate);
    return candidate;
  };
  history.forEach((message, index) => {
    const id = message.messageId ?? `skein-${index}`;
    const push = (m: Message) => {
      messages.push(m);
      source.push(index);
    };
    if (message.role === 'tool') {
      for (const c of message.contents) {
        if (c.kind !== 'function-result') continue;
        push({ id: unique(resultMessageId(c)), role: 'tool', toolCallId: c.callId, content: resultContent(c), ...(c.error !== undefined ? { error: c.error } : {}) });
      }
      return;
    }
    const text = textOf(message.contents);
    if (message.role === 'assistant') {
      const toolCalls: ToolCall[] = message.contents.flatMap((c) =>
        c.kind === 'function-call' ? [{ id: c.callId, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }] : [],
      );
      if (!text && toolCalls.length === 0) return;
      push({ id: unique(id), role: 'assistant', ...(text ? { content: text } : {}), ...(toolCalls.length ? { toolCalls } : {}), ...(message.authorName ? { name: message.authorName } : {}) });
      return;
    }
    if (message.role === 'system') {
      push({ id: unique(id), role: 'system', content: text });
      return;
    }
    const parts = userParts(message.contents);
    if (parts === undefined) return; // approval answers only: nothing the client shows
    push({ id: unique(id), role: 'user', content: parts.length === 1 && parts[0]!.type === 'text' ? parts[0]!.text : parts, ...(message.authorName ? { name: message.authorName } : {}) });
  });
  return { messages, source };
}

/** A client's user, system or developer message as a Skein message (developer messages are system messages to Skein). */
export function fromAgUiMessage(message: Message): ChatMessage {
  switch (message.role) {
    case 'user':
      return { role: 'user', contents: typeof message.content === 'string' ? [{ kind: 'text', text: message.content }] : message.content.map(fromPart), messageId: message.id, createdAt: new Date().toISOString(), ...(message.name ? { authorName: message.name } : {}) };
    case 'system':
    case 'developer':
      return { role: 'system', contents: [{ kind: 'text', text: message.content }], messageId: message.id, createdAt: new Date().toISOString() };
    default:
      throw new TypeError(`Only user, system and developer messages become Skein input; found a ${message.role} message.`);
  }
}

/** A client's tool message (a frontend tool's result) as the Skein result of its call, remembering the client's message id. */
export function resultFromAgUi(message: Extract<Message, { role: 'tool' }>): FunctionResultContent {
  const text = typeof message.content === 'string' ? message.content : message.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
  const result: FunctionResultContent = { kind: 'function-result', callId: message.toolCallId, additionalProperties: { [AG_UI_MESSAGE_ID]: message.id } };
  if (message.error !== undefined) result.error = message.error;
  else result.result = text;
  return result;
}

/** The text a tool result message carries (a JSON result as its JSON text). */
export function resultContent(result: FunctionResultContent): string {
  return result.error !== undefined ? result.error : typeof result.result === 'string' ? result.result : functionResultText(result);
}

function textOf(contents: readonly AIContent[]): string {
  let text = '';
  for (const c of contents) if (c.kind === 'text') text += c.text;
  return text;
}

function userParts(contents: readonly AIContent[]): ContentPart[] | undefined {
  const parts: ContentPart[] = [];
  for (const c of contents) {
    if (c.kind === 'text') parts.push({ type: 'text', text: c.text });
    else if (c.kind === 'data') parts.push({ type: partType(c.mediaType), source: { type: 'data', value: c.data, mimeType: c.mediaType } } as ContentPart);
    else if (c.kind === 'uri') parts.push({ type: partType(c.mediaType), source: { type: 'url', value: c.uri, ...(c.mediaType ? { mimeType: c.mediaType } : {}) } } as ContentPart);
  }
  return parts.length ? parts : contents.some((c) => c.kind === 'function-approval-response') ? undefined : [{ type: 'text', text: '' }];
}

function partType(mediaType: string | undefined): 'image' | 'audio' | 'video' | 'document' {
  if (mediaType?.startsWith('image/')) return 'image';
  if (mediaType?.startsWith('audio/')) return 'audio';
  if (mediaType?.startsWith('video/')) return 'video';
  return 'document';
}

function fromPart(part: ContentPart): AIContent {
  if (part.type === 'text') return { kind: 'text', text: part.text };
  const { source } = part;
  if (source.type === 'data') return { kind: 'data', data: source.value, mediaType: source.mimeType };
  // A url, or a file the provider holds: a reference the model client resolves.
  return { kind: 'uri', uri: source.value, ...(source.mimeType ? { mediaType: source.mimeType } : {}) };
}
