import { randomUUID } from 'node:crypto';
import type { Artifact, Message, Part } from '@a2a-js/sdk';
import { Role, TaskState } from './a2a-peers.js';
import type { AIContent, ChatMessage } from 'skein';
import type { A2ATaskStateName } from './a2a-errors.js';

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

/** Skein contents -> A2A parts. Tool calls, results, usage and reasoning stay inside Skein. */
export function toParts(contents: readonly AIContent[]): Part[] {
  const parts: Part[] = [];
  for (const c of contents) {
    switch (c.kind) {
      case 'text':
        if (c.text !== '') parts.push(textPart(c.text));
        break;
      case 'data':
        parts.push({ content: { $case: 'raw', value: Buffer.from(c.data, 'base64') }, metadata: undefined, filename: '', mediaType: c.mediaType });
        break;
      case 'uri':
        parts.push({ content: { $case: 'url', value: c.uri }, metadata: undefined, filename: '', mediaType: c.mediaType ?? '' });
        break;
      default:
        break;
    }
  }
  return parts;
}

/** A2A parts -> Skein contents: text, inline bytes (base64 `data`), URLs (`uri`), structured data as JSON `data`. */
export function toContents(parts: readonly Part[] | undefined): AIContent[] {
  const contents: AIContent[] = [];
  for (const part of parts ?? []) {
    const content = part.content;
    if (!content) continue;
    switch (content.$case) {
      case 'text':
        contents.push({ kind: 'text', text: content.value });
        break;
      case 'raw':
        contents.push({ kind: 'data', data: Buffer.from(content.value).toString('base64'), mediaType: part.mediaType || 'application/octet-stream' });
        break;
      case 'url':
        contents.push(part.mediaType ? { kind: 'uri', uri: content.value, mediaType: part.mediaType } : { kind: 'uri', uri: content.value });
        break;
      case 'data':
        contents.push({
          kind: 'data',
          data: Buffer.from(JSON.stringify(content.value ?? null)).toString('base64'),
          mediaType: 'application/json',
        });
        break;
    }
  }
  return contents;
}

export function partsText(parts: readonly Part[] | undefined): string {
  let text = '';
  for (const part of parts ?? []) if (part.content?.$case === 'text') text += part.content.value;
  return text;
}

/** The A2A message a run sends: every input message's contents, as one user message. */
export function toA2AMessage(input: readonly ChatMessage[], ids: { contextId?: string; taskId?: string }): Message {
  return {
    messageId: randomUUID(),
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role: Role.ROLE_USER,
    parts: toParts(input.flatMap((m) => m.contents)),
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
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
