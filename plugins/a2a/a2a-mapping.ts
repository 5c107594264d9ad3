import { randomUUID } from 'node:crypto';
import type { Artifact, Message, Part } from '@a2a-js/sdk';
import { Role, TaskState } from './a2a-peers.js';
import type { AIContent, ChatMessage, JsonValue } from 'skein';
import { A2AInputError, type A2ATaskStateName } from './a2a-errors.js';

/** A task state the remote will not move on from without this client (or at all). */
export function isFinalState(state: TaskState | undefined): boolean {
  return (
    state === TaskState.TASK_STATE_COMPLETED ||
    state === TaskState.TASK_STATE_FAILED ||
    state === TaskState.TASK_STATE_CANCELED ||
    state === TaskState.TASK_STATE_REJECTED ||
    state === TaskState.TASK_STATE_INPUT_REQUIRED ||
    state === TaskState.TASK_STATE_AUTH_REQUIRED
  );
}

/** Terminal in the protocol's sense: the task can never change again. */
export function isTerminalState(state: TaskState | undefined): boolean {
  return (
    state === TaskState.TASK_STATE_COMPLETED ||
    state === TaskState.TASK_STATE_FAILED ||
    state === TaskState.TASK_STATE_CANCELED ||
    state === TaskState.TASK_STATE_REJECTED
  );
}

const STATE_NAMES: Partial<Record<TaskState, A2ATaskStateName>> = {
  [TaskState.TASK_STATE_SUBMITTED]: 'submitted',
  [TaskState.TASK_STATE_WORKING]: 'working',
  [TaskState.TASK_STATE_COMPLETED]: 'completed',
  [TaskState.TASK_STATE_FAILED]: 'failed',
  [TaskState.TASK_STATE_CANCELED]: 'canceled',
  [TaskState.TASK_STATE_INPUT_REQUIRED]: 'input-required',
  [TaskState.TASK_STATE_REJECTED]: 'rejected',
  [TaskState.TASK_STATE_AUTH_REQUIRED]: 'auth-required',
};

export function stateName(state: TaskState | undefined): A2ATaskStateName {
  return (state !== undefined ? STATE_NAMES[state] : undefined) ?? 'unknown';
}

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/**
 * Skein contents -> A2A parts (a hosted agent's answer). Tool calls, results, usage and reasoning
 * stay inside Skein. JSON data goes as a structured `data` part; other bytes and URLs as file
 * parts, with `additionalProperties.filename` as the file name when the content has one.
 */
export function toParts(contents: readonly AIContent[]): Part[] {
  const parts: Part[] = [];
  for (const c of contents) {
    const filename = typeof c.additionalProperties?.filename === 'string' ? c.additionalProperties.filename : '';
    switch (c.kind) {
      case 'text':
        if (c.text !== '') parts.push(textPart(c.text));
        break;
      case 'data':
        parts.push(dataPart(c.data, c.mediaType, filename));
        break;
      case 'uri':
        parts.push({ content: { $case: 'url', value: c.uri }, metadata: undefined, filename, mediaType: c.mediaType ?? '' });
        break;
      default:
        break;
    }
  }
  return parts;
}

/**
 * A2A parts -> Skein contents: text; file bytes as base64 `data` and file URLs as `uri`, each
 * with the part's file name as `additionalProperties.filename`; a structured `data` part as
 * `application/json` data whose parsed value is also at `additionalProperties.json`.
 */
export function toContents(parts: readonly Part[] | undefined): AIContent[] {
  const contents: AIContent[] = [];
  for (const part of parts ?? []) {
    const content = part.content;
    if (!content) continue;
    const named = part.filename ? { additionalProperties: { filename: part.filename } } : {};
    switch (content.$case) {
      case 'text':
        contents.push({ kind: 'text', text: content.value });
        break;
      case 'raw':
        contents.push({ kind: 'data', data: Buffer.from(content.value).toString('base64'), mediaType: part.mediaType || 'application/octet-stream', ...named });
        break;
      case 'url':
        contents.push({ kind: 'uri', uri: content.value, ...(part.mediaType ? { mediaType: part.mediaType } : {}), ...named });
        break;
      case 'data': {
        const json = (content.value ?? null) as JsonValue;
        contents.push({
          kind: 'data',
          data: Buffer.from(JSON.stringify(json)).toString('base64'),
          mediaType: part.mediaType || 'application/json',
          additionalProperties: { ...named.additionalProperties, json },
        });
        break;
      }
    }
  }
  return contents;
}

export function partsText(parts: readonly Part[] | undefined): string {
  let text = '';
  for (const part of parts ?? []) if (part.content?.$case === 'text') text += part.content.value;
  return text;
}

/**
 * The A2A message a run sends: every input message's contents, as one user message (see
 * `toInputParts`). Throws `A2AInputError` when there is nothing to send or a content has no part.
 */
export function toA2AMessage(input: readonly ChatMessage[], ids: { contextId?: string; taskId?: string }): Message {
  const parts = toInputParts(input.flatMap((m) => m.contents));
  if (parts.length === 0) {
    throw new A2AInputError('An A2A message needs at least one text, data or uri content; the input has none (an empty text is not sent).');
  }
  return {
    messageId: randomUUID(),
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** Kinds that are not message content: they stay inside Skein (tool loop, usage, approvals). */
const NOT_CONTENT = new Set([
  'function-call',
  'function-result',
  'usage',
  'reasoning',
  'error',
  'function-approval-request',
  'function-approval-response',
  'hosted-mcp-call',
  'hosted-mcp-tools',
]);

const EXTENSIONS: Record<string, string> = {
  'text/plain': 'txt', 'text/markdown': 'md', 'text/csv': 'csv', 'text/html': 'html', 'application/json': 'json', 'application/pdf': 'pdf',
  'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp', 'audio/mpeg': 'mp3', 'audio/wav': 'wav',
};
const MEDIA_TYPES: Record<string, string> = { ...Object.fromEntries(Object.entries(EXTENSIONS).map(([type, ext]) => [ext, type])), jpeg: 'image/jpeg' };

/**
 * Skein contents -> the parts of a message sent to a remote agent. Text as `text` parts; JSON
 * data (`application/json`, `*+json`) as a structured `data` part; other bytes as a `raw` file
 * part and URLs (`data:` URLs become bytes) as a `url` file part, each with a file name and media
 * type: `additionalProperties.filename` when the content has one, else from the URL's last
 * segment or made up from the media type (`file-2.pdf`). A content kind A2A has no part for
 * (a plugin's own kind) is refused with `A2AInputError`, never dropped.
 */
export function toInputParts(contents: readonly AIContent[]): Part[] {
  const parts: Part[] = [];
  contents.forEach((c, index) => {
    const named = typeof c.additionalProperties?.filename === 'string' ? c.additionalProperties.filename : undefined;
    switch (c.kind) {
      case 'text':
        if (c.text !== '') parts.push(textPart(c.text));
        return;
      case 'data':
        parts.push(dataPart(c.data, c.mediaType, named ?? madeUpName(index, c.mediaType)));
        return;
      case 'uri': {
        const inline = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(c.uri);
        if (inline) {
          parts.push(dataPart(inline[2]!, c.mediaType ?? inline[1]!, named ?? madeUpName(index, c.mediaType ?? inline[1]!)));
          return;
        }
        const filename = named ?? urlFileName(c.uri);
        const mediaType = c.mediaType ?? MEDIA_TYPES[filename.split('.').pop()?.toLowerCase() ?? ''] ?? '';
        parts.push({ content: { $case: 'url', value: c.uri }, metadata: undefined, filename, mediaType });
        return;
      }
      default:
        if (NOT_CONTENT.has(c.kind)) return;
        throw new A2AInputError(
          `contents[${index}]: A2A has no part for content kind "${c.kind}"; send it as text, data (bytes with a media type) or a uri.`,
          c.kind,
        );
    }
  });
  return parts;
}

function dataPart(data: string, mediaType: string, filename: string): Part {
  const bytes = Buffer.from(data, 'base64');
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
    try {
      return { content: { $case: 'data', value: JSON.parse(bytes.toString('utf8')) as unknown }, metadata: undefined, filename: '', mediaType };
    } catch {
      // Not JSON after all: the bytes go as a file, unchanged.
    }
  }
  return { content: { $case: 'raw', value: bytes }, metadata: undefined, filename, mediaType };
}

function madeUpName(index: number, mediaType: string): string {
  const ext = EXTENSIONS[mediaType] ?? (mediaType.split('/')[1]?.replace(/^.*[.+]/, '').replace(/[^a-z0-9]/gi, '') || 'bin');
  return `file-${index + 1}.${ext}`;
}

function urlFileName(uri: string): string {
  try {
    const last = new URL(uri).pathname.split('/').pop() ?? '';
    return decodeURIComponent(last);
  } catch {
    return '';
  }
}

/** An A2A message received by a hosted agent, as the Skein input message. */
export function fromA2AMessage(message: Message): ChatMessage {
  const out: ChatMessage = {
    role: message.role === Role.ROLE_AGENT ? 'assistant' : 'user',
    contents: toContents(message.parts),
    createdAt: new Date().toISOString(),
  };
  if (message.messageId) out.messageId = message.messageId;
  return out;
}

export function agentMessage(parts: Part[], ids: { contextId: string; taskId: string }): Message {
  return {
    messageId: randomUUID(),
    contextId: ids.contextId,
    taskId: ids.taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export function artifact(artifactId: string, parts: Part[], name = 'response'): Artifact {
  return { artifactId, name, description: '', parts, metadata: undefined, extensions: [] };
}

/** Streamed text chunks joined back into one text part (other parts kept in order). */
export function mergeText(parts: Part[]): Part[] {
  const out: Part[] = [];
  for (const part of parts) {
    const last = out[out.length - 1];
    if (part.content?.$case === 'text' && last?.content?.$case === 'text') out[out.length - 1] = textPart(last.content.value + part.content.value);
    else out.push(part);
  }
  return out;
}
