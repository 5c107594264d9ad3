import { arrayOf, BadRequest, record } from './bad-request.js';
import type { FilesState } from './files-routes.js';
import { isRecord, type Json, messageText } from './run-simulator.js';

/**
 * Assistants message content as the service takes it: a string or `text`, `image_url` (http(s)
 * only) and `image_file` parts, images in user messages only, and `attachments` of uploaded files;
 * and how the emulated model reads such a message.
 */
/** A message's content as stored: text parts as `{type:"text", text:{value, annotations}}`, image parts as sent. */
export function contentParts(files: FilesState, content: unknown, role: string, param: string): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: { value: content, annotations: [] } }];
  if (!Array.isArray(content) || content.length === 0) throw new BadRequest(`Invalid '${param}': expected a string or a non-empty array of content parts.`, 400, param);
  return content.map((raw, i) => {
    const at = `${param}[${i}]`;
    const part = record(raw, at);
    if (part.type === 'text') {
      if (typeof part.text !== 'string') throw new BadRequest(`Invalid '${at}.text': expected a string.`, 400, `${at}.text`);
      return { type: 'text', text: { value: part.text, annotations: [] } };
    }
    if (part.type !== 'image_url' && part.type !== 'image_file') {
      throw new BadRequest(`Invalid '${at}.type': expected one of "text", "image_url", "image_file", got ${JSON.stringify(part.type)}.`, 400, `${at}.type`);
    }
    if (role !== 'user') throw new BadRequest(`Invalid '${at}': image content is only supported in messages with role "user".`, 400, at);
    const image = record(part[part.type], `${at}.${part.type}`);
    if (image.detail !== undefined && !['auto', 'low', 'high'].includes(image.detail as string)) {
      throw new BadRequest(`Invalid '${at}.${part.type}.detail': expected "auto", "low" or "high".`, 400, `${at}.${part.type}.detail`);
    }
    if (part.type === 'image_url') {
      if (typeof image.url !== 'string' || !/^https?:\/\/[^\s]+$/i.test(image.url)) {
        throw new BadRequest(`Invalid '${at}.image_url.url'. Expected a valid URL, but got a value with an invalid format.`, 400, `${at}.image_url.url`);
      }
      return { type: 'image_url', image_url: { url: image.url, detail: image.detail ?? 'auto' } };
    }
    existingFile(files, image.file_id, `${at}.image_file.file_id`);
    return { type: 'image_file', image_file: { file_id: image.file_id, detail: image.detail ?? 'auto' } };
  });
}

/** Attachments: uploaded files, each for file_search and/or code_interpreter. */
export function attachments(files: FilesState, value: unknown, param: string): Json[] {
  return arrayOf(value, param).map((raw, i) => {
    const at = `${param}[${i}]`;
    const attachment = record(raw, at);
    existingFile(files, attachment.file_id, `${at}.file_id`);
    const tools = arrayOf(attachment.tools, `${at}.tools`).map((t, j) => {
      if (!isRecord(t) || (t.type !== 'file_search' && t.type !== 'code_interpreter')) {
        throw new BadRequest(`Invalid '${at}.tools[${j}].type': expected "file_search" or "code_interpreter".`, 400, `${at}.tools[${j}]`);
      }
      return { type: t.type };
    });
    return { file_id: attachment.file_id, tools };
  });
}

function existingFile(files: FilesState, fileId: unknown, param: string): void {
  if (typeof fileId !== 'string' || !files.files.has(fileId)) throw new BadRequest(`No file found with id ${JSON.stringify(fileId)}.`, 404, param);
}

/** A message as the model reads it: its text, then what it shows or attaches. */
export function modelText(files: FilesState, message: Json): string {
  const notes: string[] = [];
  for (const part of message.content as Json[]) {
    if (part.type === 'image_url') notes.push(`[image: ${(part.image_url as Json).url as string}]`);
    if (part.type === 'image_file') notes.push(`[image: ${fileName(files, (part.image_file as Json).file_id as string)}]`);
  }
  for (const a of (message.attachments as Json[] | undefined) ?? []) {
    notes.push(`[attachment: ${fileName(files, a.file_id as string)} for ${(a.tools as Json[]).map((t) => t.type as string).join(' and ') || 'no tool'}]`);
  }
  const text = messageText(message);
  return notes.length ? [text, ...notes].filter(Boolean).join(' ') : text;
}

function fileName(files: FilesState, fileId: string): string {
  return (files.files.get(fileId)?.object.filename as string | undefined) ?? fileId;
}
