import type OpenAI from 'openai';
import { type AIContent, type ChatMessage, SkeinError } from 'skein';
import { annotationsJson } from './openai-assistant-files.js';

export function messageText(message: ChatMessage): string {
  return message.contents.map((c) => (c.kind === 'text' ? c.text : '')).join('');
}

export function toThreadMessage(message: ChatMessage): OpenAI.Beta.Threads.Messages.MessageCreateParams {
  if (message.role !== 'user' && message.role !== 'assistant') {
    throw new SkeinError(`Assistant threads take user and assistant messages; got a "${message.role}" message. Put system text in invocationOptions.additionalInstructions.`);
  }
  return { role: message.role, content: messageText(message) };
}

/**
 * A thread message -> a Skein message; annotations (file citations, file paths) ride along on
 * the text as `additionalProperties.annotations` (plain JSON, see OpenAIAssistantAnnotation).
 */
export function fromThreadMessage(message: OpenAI.Beta.Threads.Message, agentName?: string): ChatMessage {
  const contents: AIContent[] = [];
  for (const part of message.content) {
    if (part.type === 'text') {
      const annotations = annotationsJson(part.text.annotations);
      contents.push(annotations.length ? { kind: 'text', text: part.text.value, additionalProperties: { annotations } } : { kind: 'text', text: part.text.value });
    } else if (part.type === 'image_file') {
      contents.push({ kind: 'uri', uri: `openai-file:${part.image_file.file_id}` });
    } else if (part.type === 'image_url') {
      contents.push({ kind: 'uri', uri: part.image_url.url });
    }
  }
  const out: ChatMessage = { role: message.role, contents, messageId: message.id, createdAt: new Date(message.created_at * 1000).toISOString() };
  if (message.role === 'assistant' && agentName !== undefined) out.authorName = agentName;
  return out;
}
