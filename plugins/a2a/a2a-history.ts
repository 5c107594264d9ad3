import type { Task } from '@a2a-js/sdk';
import type { ChatMessage } from 'skein';
import { fromA2AMessage, toContents } from './a2a-mapping.js';

/**
 * A context's tasks as Skein messages, oldest task first (by status time): each task's history
 * (user and agent messages), then its last status message when the history lacks it, then its
 * artifacts as one assistant message (the answer a run returned for the task).
 */
export function messagesFromTasks(tasks: readonly Task[]): ChatMessage[] {
  const ordered = [...tasks].sort((a, b) => (a.status?.timestamp ?? '').localeCompare(b.status?.timestamp ?? '') || a.id.localeCompare(b.id));
  const messages: ChatMessage[] = [];
  for (const task of ordered) {
    const seen = new Set<string>();
    for (const message of task.history ?? []) {
      if (message.messageId) seen.add(message.messageId);
      messages.push(withoutReadTime(fromA2AMessage(message), task.id));
    }
    const last = task.status?.message;
    if (last && !(last.messageId && seen.has(last.messageId))) messages.push(withoutReadTime(fromA2AMessage(last), task.id));
    const contents = (task.artifacts ?? []).flatMap((a) => toContents(a.parts));
    if (contents.length) messages.push({ role: 'assistant', contents, additionalProperties: { a2a: { taskId: task.id, artifacts: true } } });
  }
  return messages;
}

/** fromA2AMessage stamps the time it was received; read back from history that would be the read time, not the message's. */
function withoutReadTime(message: ChatMessage, taskId: string): ChatMessage {
  const { createdAt: _readTime, ...rest } = message;
  return { ...rest, additionalProperties: { a2a: { taskId } } };
}
