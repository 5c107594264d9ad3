import OpenAI, { toFile } from 'openai';
import { type AIContent, type ChatMessage, isToolResultsMessage, type JsonValue, toolResultsMarkerOf, toolResultsNoteMetadata } from 'skein';
import { call } from './openai-assistant-calls.js';
import { AssistantContentError } from './openai-assistant-errors.js';
import { annotationsJson } from './openai-assistant-files.js';

type MessageCreateParams = OpenAI.Beta.Threads.Messages.MessageCreateParams;
type ContentPart = OpenAI.Beta.Threads.Messages.MessageContentPartParam;
type AttachmentTool = 'file_search' | 'code_interpreter';
type ImageDetail = 'auto' | 'low' | 'high';

/** An uploaded (or already uploaded) file id `openai-file:<id>`, the form `fromThreadMessage` reads image files back in. */
export const OPENAI_FILE_URI_PREFIX = 'openai-file:';

/** Image types the Assistants API reads (`image_url` and `image_file`). */
const IMAGE_TYPES = new Map([
  ['image/png', 'png'],
  ['image/jpeg', 'jpg'],
  ['image/jpg', 'jpg'],
  ['image/gif', 'gif'],
  ['image/webp', 'webp'],
]);

/** Document types file search reads, with the extension the upload is named with. */
const FILE_SEARCH_TYPES = new Map([
  ['text/plain', 'txt'],
  ['text/markdown', 'md'],
  ['text/html', 'html'],
  ['application/json', 'json'],
  ['application/pdf', 'pdf'],
  ['application/msword', 'doc'],
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
  ['application/vnd.openxmlformats-officedocument.presentationml.presentation', 'pptx'],
  ['text/x-python', 'py'],
  ['text/javascript', 'js'],
  ['application/typescript', 'ts'],
  ['text/css', 'css'],
]);

/** Data types only code interpreter reads. */
const CODE_INTERPRETER_TYPES = new Map([
  ['text/csv', 'csv'],
  ['application/vnd.ms-excel', 'xls'],
  ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'xlsx'],
  ['application/xml', 'xml'],
  ['text/xml', 'xml'],
  ['application/zip', 'zip'],
  ['application/x-tar', 'tar'],
]);

/** A file a message needs uploaded before it is sent. */
interface PendingUpload {
  name: string;
  bytes: Buffer;
  purpose: 'vision' | 'assistants';
}

type PlannedPart = { part: ContentPart } | { image: PendingUpload; detail?: ImageDetail };
type PlannedAttachment = { fileId: string; tools: AttachmentTool[] } | { upload: PendingUpload; tools: AttachmentTool[] };

/**
 * A message checked and mapped to what the Assistants API takes, before any request: its
 * content parts and attachments, some still to be uploaded.
 */
export interface PlannedThreadMessage {
  role: 'user' | 'assistant';
  parts: PlannedPart[];
  attachments: PlannedAttachment[];
  /** The thread message's metadata: a tool results note keeps its marker. */
  metadata?: Record<string, string>;
}

/**
 * Maps messages to thread messages, refusing (AssistantContentError) whatever an assistant thread
 * cannot carry, so a bad message fails before anything is sent. Text goes as text parts; a web
 * image as `image_url`; inline image data is uploaded (purpose `vision`) and sent as
 * `image_file`; an `openai-file:<id>` image as `image_file`; any other file (inline data, or an
 * uploaded `openai-file:<id>` with its media type) as an attachment for file search or code
 * interpreter, chosen by its media type.
 */
export function planThreadMessages(messages: readonly ChatMessage[], path: string): PlannedThreadMessage[] {
  return messages.map((message, i) => planThreadMessage(message, `${path}[${i}]`));
}

export function planThreadMessage(message: ChatMessage, path: string): PlannedThreadMessage {
  const role = message.role;
  if (role !== 'user' && role !== 'assistant') {
    throw new AssistantContentError(
      `${path}.role`,
      `assistant threads take user and assistant messages; found a "${role}" message. Put system text in invocationOptions.additionalInstructions.`,
    );
  }
  const planned: PlannedThreadMessage = { role, parts: [], attachments: [], ...(isToolResultsMessage(message) ? { metadata: toolResultsNoteMetadata() } : {}) };
  message.contents.forEach((content, j) => planContent(planned, content, `${path}.contents[${j}]`));
  return planned;
}

function planContent(planned: PlannedThreadMessage, content: AIContent, path: string): void {
  if (content.kind === 'text') {
    planned.parts.push({ part: { type: 'text', text: content.text } });
    return;
  }
  if (content.kind === 'data') {
    planData(planned, content.data, content.mediaType, content.additionalProperties, path);
    return;
  }
  if (content.kind === 'uri') {
    planUri(planned, content.uri, content.mediaType, content.additionalProperties, path);
    return;
  }
  throw new AssistantContentError(
    path,
    `an assistant thread message carries text, images and files; found "${content.kind}" content. Send text, data or uri content (tool calls and results stay inside runs).`,
  );
}

function planUri(planned: PlannedThreadMessage, uri: string, mediaType: string | undefined, extra: Extra, path: string): void {
  const dataUrl = /^data:([^;,]+)(;base64)?,(.*)$/s.exec(uri);
  if (dataUrl) {
    // The service refuses data URLs in image_url; their bytes are uploaded like data content.
    const bytes = dataUrl[2] ? dataUrl[3]! : Buffer.from(decodeURIComponent(dataUrl[3]!), 'utf8').toString('base64');
    planData(planned, bytes, mediaType ?? dataUrl[1]!, extra, path);
    return;
  }
  if (uri.startsWith(OPENAI_FILE_URI_PREFIX)) {
    const fileId = uri.slice(OPENAI_FILE_URI_PREFIX.length);
    if (!fileId) throw new AssistantContentError(path, `expected "${OPENAI_FILE_URI_PREFIX}<file id>", found "${uri}".`);
    if (mediaType === undefined || mediaType.startsWith('image/')) {
      imageOnlyForUsers(planned, path);
      if (mediaType !== undefined) imageType(mediaType, path);
      planned.parts.push({ part: { type: 'image_file', image_file: { file_id: fileId, ...detailOf(extra, path) } } });
    } else {
      planned.attachments.push({ fileId, tools: attachmentTools(mediaType, extra, path) });
    }
    return;
  }
  if (!/^https?:\/\//i.test(uri)) {
    throw new AssistantContentError(path, `expected an http(s) image URL, a data: URL or "${OPENAI_FILE_URI_PREFIX}<file id>", found "${uri.slice(0, 40)}". Send local bytes as data content.`);
  }
  if (mediaType !== undefined && !mediaType.startsWith('image/')) {
    throw new AssistantContentError(
      path,
      `an assistant thread takes web URLs for images only; found a "${mediaType}" URL. Download it and send the bytes as data content (uploaded as an attachment), or upload it and send "${OPENAI_FILE_URI_PREFIX}<file id>".`,
    );
  }
  imageOnlyForUsers(planned, path);
  if (mediaType !== undefined) imageType(mediaType, path);
  planned.parts.push({ part: { type: 'image_url', image_url: { url: uri, ...detailOf(extra, path) } } });
}

function planData(planned: PlannedThreadMessage, base64: string, mediaType: string, extra: Extra, path: string): void {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length === 0) throw new AssistantContentError(path, `expected ${mediaType} data, found none. Send the file's bytes (base64) or leave the content out.`);
  if (mediaType.startsWith('image/')) {
    imageOnlyForUsers(planned, path);
    const ext = imageType(mediaType, path);
    planned.parts.push({ image: { name: fileName(extra, `image.${ext}`), bytes, purpose: 'vision' }, ...detailOf(extra, path) });
    return;
  }
  const tools = attachmentTools(mediaType, extra, path);
  const ext = FILE_SEARCH_TYPES.get(mediaType) ?? CODE_INTERPRETER_TYPES.get(mediaType) ?? 'bin';
  planned.attachments.push({ upload: { name: fileName(extra, `file.${ext}`), bytes, purpose: 'assistants' }, tools });
}

type Extra = AIContent['additionalProperties'];

function imageOnlyForUsers(planned: PlannedThreadMessage, path: string): void {
  if (planned.role !== 'user') {
    throw new AssistantContentError(path, 'the Assistants API takes images in user messages only; found one in an assistant message. Describe it in text, or send it in a user message.');
  }
}

function imageType(mediaType: string, path: string): string {
  const ext = IMAGE_TYPES.get(mediaType.toLowerCase());
  if (!ext) throw new AssistantContentError(path, `the Assistants API reads png, jpeg, gif and webp images; found "${mediaType}". Convert the image to one of them.`);
  return ext;
}

/** The tools an attached file is for: `additionalProperties.tools` when given, else by media type. */
function attachmentTools(mediaType: string, extra: Extra, path: string): AttachmentTool[] {
  const asked = extra?.tools;
  if (asked !== undefined) {
    const valid = Array.isArray(asked) && asked.length > 0 && asked.every((t: JsonValue) => t === 'file_search' || t === 'code_interpreter');
    if (!valid) throw new AssistantContentError(`${path}.additionalProperties.tools`, `expected a non-empty array of "file_search" and/or "code_interpreter", found ${JSON.stringify(asked)}.`);
    return [...new Set(asked as AttachmentTool[])];
  }
  const type = mediaType.toLowerCase();
  if (FILE_SEARCH_TYPES.has(type)) return ['file_search'];
  if (CODE_INTERPRETER_TYPES.has(type)) return ['code_interpreter'];
  throw new AssistantContentError(
    path,
    `no Assistants tool reads "${mediaType}" files (file search reads text, markdown, html, json, pdf and office documents; code interpreter reads csv, spreadsheets, xml and archives). Convert the file, or name the tool in additionalProperties.tools.`,
  );
}

function detailOf(extra: Extra, path: string): { detail?: ImageDetail } {
  const detail = extra?.detail;
  if (detail === undefined) return {};
  if (detail !== 'auto' && detail !== 'low' && detail !== 'high') {
    throw new AssistantContentError(`${path}.additionalProperties.detail`, `expected "auto", "low" or "high", found ${JSON.stringify(detail)}.`);
  }
  return { detail };
}

function fileName(extra: Extra, fallback: string): string {
  const name = extra?.filename ?? extra?.name;
  return typeof name === 'string' && name.trim() !== '' ? name : fallback;
}

/**
 * Uploads the plan's files and returns the thread messages, with the ids of the files uploaded
 * (the caller owns them: they are recorded with the thread, or deleted when nothing used them).
 * On a failed upload the files already uploaded are deleted and the error is thrown.
 */
export async function sendablePlan(client: OpenAI, plan: readonly PlannedThreadMessage[], signal: AbortSignal | undefined): Promise<{ messages: MessageCreateParams[]; uploaded: string[] }> {
  const uploaded: string[] = [];
  const upload = async (file: PendingUpload) => {
    const created = await call(async () => client.files.create({ file: await toFile(file.bytes, file.name), purpose: file.purpose }, { signal }), signal);
    uploaded.push(created.id);
    return created.id;
  };
  try {
    const messages: MessageCreateParams[] = [];
    for (const m of plan) {
      const parts: ContentPart[] = [];
      for (const p of m.parts) parts.push('part' in p ? p.part : { type: 'image_file', image_file: { file_id: await upload(p.image), ...(p.detail ? { detail: p.detail } : {}) } });
      const attachments: OpenAI.Beta.Threads.Messages.MessageCreateParams.Attachment[] = [];
      for (const a of m.attachments) attachments.push({ file_id: 'fileId' in a ? a.fileId : await upload(a.upload), tools: a.tools.map((type) => ({ type })) });
      messages.push(toParams(m.role, parts, attachments, m.metadata));
    }
    return { messages, uploaded };
  } catch (error) {
    await deleteFilesQuietly(client, uploaded);
    throw error;
  }
}

/** Text only stays a plain string (as before); anything else goes as parts. */
function toParams(
  role: 'user' | 'assistant',
  parts: ContentPart[],
  attachments: OpenAI.Beta.Threads.Messages.MessageCreateParams.Attachment[],
  metadata: Record<string, string> | undefined,
): MessageCreateParams {
  const textOnly = parts.every((p) => p.type === 'text');
  const content = textOnly ? parts.map((p) => (p as { text: string }).text).join('') : parts;
  return { role, content, ...(attachments.length ? { attachments } : {}), ...(metadata ? { metadata } : {}) };
}

export async function deleteFilesQuietly(client: OpenAI, fileIds: readonly string[]): Promise<void> {
  await Promise.all(fileIds.map((id) => client.files.delete(id).catch(() => undefined)));
}

export function messageText(message: ChatMessage): string {
  return message.contents.map((c) => (c.kind === 'text' ? c.text : '')).join('');
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
      contents.push({ kind: 'uri', uri: `${OPENAI_FILE_URI_PREFIX}${part.image_file.file_id}` });
    } else if (part.type === 'image_url') {
      contents.push({ kind: 'uri', uri: part.image_url.url });
    }
  }
  // Attached files come back as file references (sent again, they are attached for the same tools).
  for (const a of message.attachments ?? []) {
    if (!a.file_id) continue;
    const tools = (a.tools ?? []).map((t) => t.type);
    contents.push({ kind: 'uri', uri: `${OPENAI_FILE_URI_PREFIX}${a.file_id}`, mediaType: 'application/octet-stream', additionalProperties: { tools } });
  }
  const out: ChatMessage = { role: message.role, contents, messageId: message.id, createdAt: new Date(message.created_at * 1000).toISOString() };
  if (message.role === 'assistant' && agentName !== undefined) out.authorName = agentName;
  // A tool results note keeps its marker, so history reads it as the results it carries (expandToolResultsNotes).
  const marker = toolResultsMarkerOf(message.metadata);
  if (marker) out.additionalProperties = marker;
  return out;
}
