import type { MessageAttachment, MessageAttachmentToolDefinition, MessageInputContentBlockUnion, ThreadMessageOptions, ToolDefinitionUnion } from '@azure/ai-agents';
import { type AIContent, type ChatMessage, isToolResultsMessage, toolResultsNoteMetadata } from 'skein';
import { FoundryInputError } from './azure-ai-agents-errors.js';

/**
 * A file already on the Foundry project (uploaded with `client.files.upload`), referenced from a
 * Skein message as a `uri` content: `{ kind: 'uri', uri: 'foundry-file:assistant-abc', mediaType }`.
 * An image (`image/*`) becomes an `image_file` block, any other file an attachment.
 */
export const FOUNDRY_FILE_SCHEME = 'foundry-file:';

/** Image types Foundry's vision models read. */
const VISION_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** One message's contents as Foundry takes them; attachments get their tools once the agent is known. */
export interface FoundryMessageDraft {
  role: 'user' | 'assistant';
  content: string | MessageInputContentBlockUnion[];
  /** File ids to attach (files that are not images). */
  fileIds: string[];
  /** The message's metadata: a tool results note keeps its marker. */
  metadata?: Record<string, string>;
}

/**
 * Maps every message's contents to Foundry content blocks, or throws a `FoundryInputError` naming
 * the first content Foundry cannot carry — before any request, so nothing of the turn is sent.
 * Kinds that are not message content (tool calls and results, usage, reasoning, errors,
 * approvals) travel by other means and are left out here.
 */
export function foundryMessageDrafts(messages: readonly ChatMessage[]): FoundryMessageDraft[] {
  const drafts: FoundryMessageDraft[] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'user' && message.role !== 'assistant') return;
    const blocks: MessageInputContentBlockUnion[] = [];
    const fileIds: string[] = [];
    message.contents.forEach((content, contentIndex) => {
      const where = { messageIndex: index, contentIndex, kind: content.kind };
      const block = contentBlock(content, fileIds, where);
      if (block) blocks.push(block);
    });
    if (blocks.length === 0 && fileIds.length === 0) return;
    const textOnly = blocks.every((b) => b.type === 'text');
    const content = textOnly ? blocks.map((b) => (b as { text: string }).text).join('') : blocks;
    drafts.push({ role: message.role, content, fileIds, ...(isToolResultsMessage(message) ? { metadata: toolResultsNoteMetadata() } : {}) });
  });
  return drafts;
}

/** The drafts as run messages, each attachment made available to the agent's file tools. */
export function foundryMessages(drafts: readonly FoundryMessageDraft[], agentTools: readonly ToolDefinitionUnion[]): ThreadMessageOptions[] {
  const needsTools = drafts.some((d) => d.fileIds.length > 0);
  const tools = needsTools ? attachmentTools(agentTools) : [];
  return drafts.map((draft) => {
    const message: ThreadMessageOptions = { role: draft.role, content: draft.content };
    if (draft.metadata) message.metadata = draft.metadata;
    if (draft.fileIds.length > 0) message.attachments = draft.fileIds.map((fileId): MessageAttachment => ({ fileId, tools }));
    return message;
  });
}

function contentBlock(
  content: AIContent,
  fileIds: string[],
  where: { messageIndex: number; contentIndex: number; kind: string },
): MessageInputContentBlockUnion | undefined {
  switch (content.kind) {
    case 'text':
      return content.text === '' ? undefined : { type: 'text', text: content.text };
    case 'uri':
      return uriBlock(content.uri, content.mediaType, fileIds, where);
    case 'data':
      return dataBlock(content.data, content.mediaType, where);
    default:
      return undefined;
  }
}

function uriBlock(uri: string, mediaType: string | undefined, fileIds: string[], where: { messageIndex: number; contentIndex: number; kind: string }): MessageInputContentBlockUnion | undefined {
  if (uri.startsWith(FOUNDRY_FILE_SCHEME)) {
    const fileId = uri.slice(FOUNDRY_FILE_SCHEME.length);
    if (fileId === '') throw new FoundryInputError(`${at(where)}: "${uri}" names no file; expected foundry-file:<file id>.`, { ...where, mediaType });
    if (mediaType?.startsWith('image/')) return { type: 'image_file', imageFile: { fileId } } as MessageInputContentBlockUnion;
    fileIds.push(fileId);
    return undefined;
  }
  if (uri.startsWith('data:')) {
    const match = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(uri);
    if (!match) throw new FoundryInputError(`${at(where)}: a data: URI must be base64 (data:<type>;base64,...), found "${uri.slice(0, 40)}...".`, { ...where, mediaType });
    return dataBlock(match[2]!, match[1]!, where);
  }
  if (!/^https?:\/\//i.test(uri)) {
    throw new FoundryInputError(
      `${at(where)}: Foundry reads images from http(s) URLs only, found "${uri}". Upload the file with client.files.upload and pass "${FOUNDRY_FILE_SCHEME}<file id>".`,
      { ...where, mediaType },
    );
  }
  // Without a media type an http(s) URL is taken for an image: the only thing Foundry fetches by URL.
  if (mediaType === undefined || mediaType.startsWith('image/')) return { type: 'image_url', imageUrl: { url: uri } } as MessageInputContentBlockUnion;
  throw new FoundryInputError(
    `${at(where)}: Foundry fetches only images by URL, found ${mediaType} at ${uri}. Upload the file with client.files.upload and pass ` +
      `{ kind: 'uri', uri: '${FOUNDRY_FILE_SCHEME}<file id>', mediaType: '${mediaType}' } to attach it.`,
    { ...where, mediaType },
  );
}

function dataBlock(data: string, mediaType: string, where: { messageIndex: number; contentIndex: number; kind: string }): MessageInputContentBlockUnion {
  if (VISION_TYPES.has(mediaType)) return { type: 'image_url', imageUrl: { url: `data:${mediaType};base64,${data}` } } as MessageInputContentBlockUnion;
  // Text and structured data are read by the model as text: Foundry has no other block for them.
  if (mediaType.startsWith('text/') || mediaType === 'application/json' || mediaType.endsWith('+json')) {
    return { type: 'text', text: Buffer.from(data, 'base64').toString('utf8') };
  }
  const advice = mediaType.startsWith('image/')
    ? `Foundry reads ${[...VISION_TYPES].join(', ')} images; convert it to one of those`
    : `upload it with client.files.upload(stream, 'assistants') and pass { kind: 'uri', uri: '${FOUNDRY_FILE_SCHEME}<file id>', mediaType: '${mediaType}' } to attach it`;
  throw new FoundryInputError(`${at(where)}: Foundry cannot take ${mediaType} bytes inline; ${advice}.`, { ...where, mediaType });
}

/** Files attached to a message are given to the agent's file tools; without one Foundry would ignore them. */
function attachmentTools(agentTools: readonly ToolDefinitionUnion[]): MessageAttachmentToolDefinition[] {
  const tools = agentTools.filter((t) => t.type === 'file_search' || t.type === 'code_interpreter').map((t) => ({ type: t.type }) as MessageAttachmentToolDefinition);
  if (tools.length > 0) return tools;
  throw new FoundryInputError(
    'A file is attached, but the Foundry agent has neither file_search nor code_interpreter, so it could not read it. ' +
      'Add one to the agent (foundryTools: [{ type: "file_search" }]) or send the file\'s text instead.',
    { kind: 'uri' },
  );
}

function at(where: { messageIndex: number; contentIndex: number; kind: string }): string {
  return `messages[${where.messageIndex}].contents[${where.contentIndex}] (${where.kind})`;
}
