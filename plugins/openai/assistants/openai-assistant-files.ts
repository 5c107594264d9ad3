import OpenAI, { toFile } from 'openai';
import { type AgentRunResponse, type AIContent, type ChatMessage, type JsonObject } from 'skein';
import { call, OPENAI_ASSISTANTS_CLIENT_ID as PROVIDER, pause, pollHint } from './openai-assistant-calls.js';
import { VectorStoreError } from './openai-assistant-errors.js';

/** A file to upload. `content` is the file's bytes (a string is sent as UTF-8). */
export interface OpenAIFileUpload {
  /** The file name; its extension tells file search how to read it (`.txt`, `.md`, `.pdf`, ...). */
  name: string;
  content: string | Uint8Array | ArrayBuffer | Blob;
  /** Default `assistants` (what file search and code interpreter read). */
  purpose?: OpenAI.FilePurpose;
}

/** An uploaded file, as the service reports it. */
export interface OpenAIUploadedFile {
  id: string;
  name: string;
  bytes: number;
  purpose: string;
  createdAt: string;
}

export interface OpenAIVectorStoreCreationOptions {
  name?: string;
  /** Uploaded files to index (see `uploadFile`). */
  fileIds?: string[];
  metadata?: Record<string, string>;
  /** Delete the store after this many days without use. */
  expiresAfterDays?: number;
  /** How to wait for the files to be processed (the service's poll hint wins over `intervalMs`). */
  polling?: { intervalMs?: number; timeoutMs?: number };
  signal?: AbortSignal;
}

export interface OpenAIVectorStoreFileCounts {
  inProgress: number;
  completed: number;
  failed: number;
  cancelled: number;
  total: number;
}

/** A vector store, as the service reports it. */
export interface OpenAIVectorStore {
  id: string;
  name: string;
  status: 'expired' | 'in_progress' | 'completed';
  fileCounts: OpenAIVectorStoreFileCounts;
  usageBytes: number;
  createdAt: string;
}

/**
 * A citation of an uploaded file in an assistant's answer. The Assistants wire shape, kept
 * verbatim (snake_case) on the text content as `additionalProperties.annotations`:
 * `text` is the marker in the answer (e.g. `【0:0†source】`) and `start_index`/`end_index`
 * (end exclusive) locate it in that message's text.
 */
export interface OpenAIFileCitationAnnotation {
  type: 'file_citation';
  text: string;
  start_index: number;
  end_index: number;
  file_citation: { file_id: string };
}

/** A link to a file the assistant generated (code interpreter output). */
export interface OpenAIFilePathAnnotation {
  type: 'file_path';
  text: string;
  start_index: number;
  end_index: number;
  file_path: { file_id: string };
}

export type OpenAIAssistantAnnotation = OpenAIFileCitationAnnotation | OpenAIFilePathAnnotation;

/** A file citation found in an answer, with the message it is in. */
export interface OpenAIFileCitation {
  fileId: string;
  /** The marker text in the answer, e.g. `【0:0†source】`. */
  marker: string;
  startIndex: number;
  endIndex: number;
  messageId?: string;
}

const DEFAULT_INTERVAL_MS = 500;
const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/** Uploads one file (multipart) and returns what the service recorded. */
export async function uploadFile(client: OpenAI, file: OpenAIFileUpload, signal?: AbortSignal): Promise<OpenAIUploadedFile> {
  if (typeof file?.name !== 'string' || file.name.trim() === '') throw new TypeError('uploadFile needs a file name, e.g. { name: "policy.txt", content }.');
  if (file.content === undefined || file.content === null) throw new TypeError(`uploadFile needs the content of "${file.name}" (a string, bytes or a Blob).`);
  const content = typeof file.content === 'string' ? Buffer.from(file.content, 'utf8') : file.content;
  const created = await call(async () => client.files.create({ file: await toFile(content, file.name), purpose: file.purpose ?? 'assistants' }, { signal }), signal);
  return { id: created.id, name: created.filename, bytes: created.bytes, purpose: created.purpose, createdAt: isoTime(created.created_at) };
}

/** Deletes an uploaded file; the service also removes it from every vector store. */
export async function deleteFile(client: OpenAI, fileId: string, signal?: AbortSignal): Promise<void> {
  await call(() => client.files.delete(fileId, { signal }), signal);
}

/**
 * Creates a vector store over uploaded files and waits until they are processed, so a run
 * right after finds them. A file the service could not process fails the call with a
 * `VectorStoreError` naming it; the store is kept (its id is on the error) for you to fix or delete.
 */
export async function createVectorStore(client: OpenAI, options: OpenAIVectorStoreCreationOptions = {}): Promise<OpenAIVectorStore> {
  const { signal } = options;
  const intervalMs = options.polling?.intervalMs ?? DEFAULT_INTERVAL_MS;
  const timeoutMs = options.polling?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const stores = client.vectorStores;
  const created = await call(
    () =>
      stores
        .create(
          {
            name: options.name,
            file_ids: options.fileIds?.length ? options.fileIds : undefined,
            metadata: options.metadata,
            expires_after: options.expiresAfterDays ? { anchor: 'last_active_at', days: options.expiresAfterDays } : undefined,
          },
          { signal },
        )
        .withResponse(),
    signal,
  );
  let store = created.data;
  const deadline = Date.now() + timeoutMs;
  let wait = pollHint(created.response) ?? intervalMs;
  while (store.status === 'in_progress') {
    if (Date.now() >= deadline) {
      throw new VectorStoreError(PROVIDER, store.id, [], `Vector store ${store.id} was still processing ${store.file_counts.in_progress} file(s) after ${timeoutMs} ms. Raise polling.timeoutMs, or retrieve it later.`);
    }
    await pause(wait, signal);
    const id = store.id;
    const { data, response } = await call(() => stores.retrieve(id, { signal }).withResponse(), signal);
    store = data;
    wait = pollHint(response) ?? intervalMs;
  }
  if (store.file_counts.failed > 0) {
    const id = store.id;
    const failed = await call(async () => {
      const out: { fileId: string; code?: string; message: string }[] = [];
      for await (const f of stores.files.list(id, { filter: 'failed', limit: 100 }, { signal })) {
        out.push({ fileId: f.id, code: f.last_error?.code, message: f.last_error?.message ?? 'processing failed' });
      }
      return out;
    }, signal);
    throw new VectorStoreError(
      PROVIDER,
      store.id,
      failed,
      `Vector store ${store.id}: ${failed.length} file(s) could not be processed: ${failed.map((f) => `${f.fileId} (${f.code ? `${f.code}: ` : ''}${f.message})`).join('; ')}. The store was kept; delete it or detach those files.`,
    );
  }
  return toVectorStore(store);
}

/** Deletes a vector store (its files stay uploaded). */
export async function deleteVectorStore(client: OpenAI, vectorStoreId: string, signal?: AbortSignal): Promise<void> {
  await call(() => client.vectorStores.delete(vectorStoreId, { signal }), signal);
}

/**
 * The annotations of one content, typed; anything not shaped like an Assistants annotation
 * (e.g. from another provider) is left out.
 */
export function annotationsOf(content: AIContent): OpenAIAssistantAnnotation[] {
  const raw = content.additionalProperties?.annotations;
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((a) => {
    const annotation = toAnnotation(a);
    return annotation ? [annotation] : [];
  });
}

/** Every file citation in a response, a message or messages, in order. */
export function fileCitationsOf(source: AgentRunResponse | ChatMessage | readonly ChatMessage[]): OpenAIFileCitation[] {
  const messages: readonly ChatMessage[] = Array.isArray(source) ? source : 'contents' in source ? [source as ChatMessage] : (source as AgentRunResponse).messages;
  const out: OpenAIFileCitation[] = [];
  for (const message of messages) {
    for (const content of message.contents) {
      for (const a of annotationsOf(content)) {
        if (a.type !== 'file_citation') continue;
        out.push({ fileId: a.file_citation.file_id, marker: a.text, startIndex: a.start_index, endIndex: a.end_index, ...(message.messageId ? { messageId: message.messageId } : {}) });
      }
    }
  }
  return out;
}

/**
 * An SDK annotation (message or streamed delta) -> plain JSON with only the documented fields,
 * or undefined when it is not one (a delta missing its offsets, say).
 */
export function toAnnotation(value: unknown): OpenAIAssistantAnnotation | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const a = value as Record<string, unknown>;
  if (typeof a.text !== 'string' || !Number.isInteger(a.start_index) || !Number.isInteger(a.end_index)) return undefined;
  const base = { text: a.text, start_index: a.start_index as number, end_index: a.end_index as number };
  const fileId = (key: string) => {
    const inner = a[key];
    return typeof inner === 'object' && inner !== null && typeof (inner as Record<string, unknown>).file_id === 'string' ? ((inner as Record<string, unknown>).file_id as string) : undefined;
  };
  if (a.type === 'file_citation') {
    const id = fileId('file_citation');
    return id === undefined ? undefined : { type: 'file_citation', ...base, file_citation: { file_id: id } };
  }
  if (a.type === 'file_path') {
    const id = fileId('file_path');
    return id === undefined ? undefined : { type: 'file_path', ...base, file_path: { file_id: id } };
  }
  return undefined;
}

/** Annotations as the JSON a content's `additionalProperties` holds. */
export function annotationsJson(values: readonly unknown[] | undefined): JsonObject[] {
  return (values ?? []).flatMap((v) => {
    const a = toAnnotation(v);
    return a ? [a as unknown as JsonObject] : [];
  });
}

function toVectorStore(store: OpenAI.VectorStores.VectorStore): OpenAIVectorStore {
  const c = store.file_counts;
  return {
    id: store.id,
    name: store.name,
    status: store.status,
    fileCounts: { inProgress: c.in_progress, completed: c.completed, failed: c.failed, cancelled: c.cancelled, total: c.total },
    usageBytes: store.usage_bytes,
    createdAt: isoTime(store.created_at),
  };
}

function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}
