import { readMultipart } from './multipart.js';
import { listPage } from './list-page.js';
import type { RouteContext, RouteHandler, RouteRegistry, RouteReply, RouteRequest } from './router.js';

/**
 * Files and vector stores, as the Assistants file_search tool uses them:
 * - `POST /files` (multipart `file` + `purpose`), `GET /files` (paged), `GET`/`DELETE /files/{id}`,
 *   `GET /files/{id}/content` (the bytes as uploaded);
 * - `POST`/`GET /vector_stores`, `GET`/`POST`/`DELETE /vector_stores/{id}`,
 *   `POST`/`GET /vector_stores/{id}/files`, `GET`/`DELETE /vector_stores/{id}/files/{fileId}`,
 *   `POST /vector_stores/{id}/file_batches`, `GET .../file_batches/{batchId}` (+ `/files`, `/cancel`).
 *
 * A file attached to a vector store is `in_progress` until it is next retrieved (on its own,
 * through its batch, or through its store), then `completed` — or `failed` with
 * `unsupported_file` when its extension is not one file search reads. Only completed files are
 * searched, so a caller that does not wait for processing sees what the real service shows.
 * Deleting a file removes it from every vector store, as the service does.
 */
export interface FilesRoutesOptions {
  /** Path prefix of every route; `/v1` for OpenAI. */
  prefix?: string;
  /** Value of the `openai-poll-after-ms` header on vector store replies. */
  pollAfterMs?: number;
}

type Json = Record<string, unknown>;

export interface EmulatedFile {
  object: Json;
  bytes: Buffer;
}

export interface EmulatedVectorStore {
  object: Json;
  /** `vector_store.file` objects by file id, in the order they were attached. */
  files: Map<string, Json>;
}

export interface EmulatedFileBatch {
  object: Json;
  fileIds: string[];
}

/** Files and vector stores; the Assistants routes read them to answer file_search runs. */
export class FilesState {
  readonly files = new Map<string, EmulatedFile>();
  readonly vectorStores = new Map<string, EmulatedVectorStore>();
  readonly fileBatches = new Map<string, EmulatedFileBatch>();
}

/** Purposes the upload route accepts (those of the service's Files API). */
const PURPOSES = new Set(['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals']);
/** Extensions file search reads; others fail processing in a vector store, as on the service. */
const SEARCHABLE = new Set(['c', 'cpp', 'cs', 'css', 'doc', 'docx', 'go', 'html', 'java', 'js', 'json', 'md', 'pdf', 'php', 'pptx', 'py', 'rb', 'sh', 'tex', 'ts', 'txt']);

class FilesBadRequest extends Error {
  constructor(
    message: string,
    readonly status = 400,
    readonly param?: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export function registerFilesRoutes(registry: RouteRegistry, state: FilesState = new FilesState(), options: FilesRoutesOptions = {}): FilesState {
  const prefix = options.prefix ?? '/v1';
  const service = new FilesService(state, { 'openai-poll-after-ms': String(options.pollAfterMs ?? 5) });
  const on = (method: string, path: string, handler: (r: RouteRequest, reply: RouteReply, c: RouteContext) => unknown) => {
    const wrapped: RouteHandler = async (request, reply, context) => {
      try {
        await handler(request, reply, context);
      } catch (error) {
        if (!(error instanceof FilesBadRequest)) throw error;
        reply.error(error.status, error.message, { ...(error.param ? { param: error.param } : {}), ...(error.code ? { code: error.code } : {}) });
      }
    };
    registry.route(method, `${prefix}${path}`, wrapped);
  };
  const s = service;
  const poll = s.pollHeaders;
  on('POST', '/files', async (r, reply, c) => reply.json(200, await s.upload(r, c)));
  // GET /files pages differently: `limit` 1..10000 (default 10000), `after` only (API reference, "List files").
  on('GET', '/files', (r, reply) =>
    listPage(byCreation([...state.files.values()].map((f) => f.object).filter((f) => !r.query.purpose || f.purpose === r.query.purpose)), r, reply, { defaultLimit: 10_000, maxLimit: 10_000, before: false }),
  );
  on('GET', '/files/:id', (r, reply) => reply.json(200, s.file(r.params.id).object));
  on('DELETE', '/files/:id', (r, reply) => reply.json(200, s.deleteFile(r.params.id)));
  on('GET', '/files/:id/content', (r, reply) => s.sendContent(r.params.id, reply));
  on('POST', '/vector_stores', (r, reply, c) => reply.json(200, s.createStore(r.body, c), poll));
  on('GET', '/vector_stores', (r, reply) => listPage(byCreation([...state.vectorStores.values()].map((v) => s.storeObject(v))), r, reply));
  on('GET', '/vector_stores/:id', (r, reply) => reply.json(200, s.retrieveStore(r.params.id), poll));
  on('POST', '/vector_stores/:id', (r, reply) => reply.json(200, s.updateStore(r.params.id, r.body)));
  on('DELETE', '/vector_stores/:id', (r, reply) => reply.json(200, s.deleteStore(r.params.id)));
  on('POST', '/vector_stores/:id/files', (r, reply) => reply.json(200, s.attach(r.params.id, r.body), poll));
  on('GET', '/vector_stores/:id/files', (r, reply) => listPage(byCreation(s.storeFiles(r.params.id, r.query.filter)), r, reply));
  on('GET', '/vector_stores/:id/files/:fileId', (r, reply) => reply.json(200, s.retrieveStoreFile(r.params.id, r.params.fileId), poll));
  on('DELETE', '/vector_stores/:id/files/:fileId', (r, reply) => reply.json(200, s.detach(r.params.id, r.params.fileId)));
  on('POST', '/vector_stores/:id/files/:fileId', (r, reply) => reply.json(200, s.updateStoreFile(r.params.id, r.params.fileId, r.body)));
  on('GET', '/vector_stores/:id/files/:fileId/content', (r, reply) => reply.json(200, s.storeFileContent(r.params.id, r.params.fileId)));
  on('POST', '/vector_stores/:id/search', (r, reply) => reply.json(200, s.search(r.params.id, r.body)));
  on('POST', '/vector_stores/:id/file_batches', (r, reply, c) => reply.json(200, s.createBatch(r.params.id, r.body, c), poll));
  on('GET', '/vector_stores/:id/file_batches/:batchId', (r, reply) => reply.json(200, s.retrieveBatch(r.params.id, r.params.batchId), poll));
  on('POST', '/vector_stores/:id/file_batches/:batchId/cancel', (r, reply) => reply.json(200, s.cancelBatch(r.params.id, r.params.batchId)));
  on('GET', '/vector_stores/:id/file_batches/:batchId/files', (r, reply) => listPage(byCreation(s.batchFiles(r.params.id, r.params.batchId, r.query.filter)), r, reply));
  return state;
}

class FilesService {
  constructor(
    private readonly state: FilesState,
    readonly pollHeaders: Record<string, string>,
  ) {}

  // ---- files
  async upload(request: RouteRequest, context: RouteContext): Promise<Json> {
    const form = await readMultipart(request);
    if (!form.ok) throw new FilesBadRequest(`Uploads are multipart/form-data with a \`file\` and a \`purpose\`: ${form.reason}.`);
    const purpose = form.fields.get('purpose');
    if (typeof purpose !== 'string' || !purpose) throw new FilesBadRequest("Missing required parameter: 'purpose'.", 400, 'purpose');
    if (!PURPOSES.has(purpose)) throw new FilesBadRequest(`'${purpose}' is not one of ${[...PURPOSES].map((p) => `'${p}'`).join(', ')} - 'purpose'.`, 400, 'purpose');
    const file = form.fields.get('file');
    if (file === undefined || typeof file === 'string') throw new FilesBadRequest("Missing required parameter: 'file' (a file part, not a text field).", 400, 'file');
    if (!file.filename) throw new FilesBadRequest('The uploaded file has no filename.', 400, 'file');
    if (file.bytes.length === 0) throw new FilesBadRequest(`File '${file.filename}' is empty. Upload a file with content.`, 400, 'file', 'empty_file');
    const object: Json = {
      id: context.ids.next('file-'),
      object: 'file',
      bytes: file.bytes.length,
      created_at: now(),
      filename: file.filename,
      purpose,
      status: 'processed',
    };
    this.state.files.set(object.id as string, { object, bytes: file.bytes });
    return object;
  }

  file(id: string): EmulatedFile {
    const found = this.state.files.get(id);
    if (!found) throw new FilesBadRequest(`No such File object: ${id}`, 404, 'id');
    return found;
  }

  deleteFile(id: string): Json {
    this.file(id);
    this.state.files.delete(id);
    for (const store of this.state.vectorStores.values()) store.files.delete(id);
    return { id, object: 'file', deleted: true };
  }

  sendContent(id: string, reply: RouteReply): void {
    const { bytes } = this.file(id);
    reply.raw.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
    reply.raw.end(bytes);
  }

  // ---- vector stores
  createStore(body: unknown, context: RouteContext): Json {
    const b = body === undefined ? {} : record(body, 'body');
    const fileIds = stringArray(b.file_ids, 'file_ids');
    for (const id of fileIds) this.file(id);
    const object: Json = {
      id: context.ids.next('vs_'),
      object: 'vector_store',
      created_at: now(),
      name: typeof b.name === 'string' ? b.name : '',
      description: typeof b.description === 'string' ? b.description : null,
      usage_bytes: 0,
      file_counts: {},
      status: 'completed',
      // Optional fields are left out rather than null, as the API's schemas type them.
      ...(isRecord(b.expires_after) ? { expires_after: b.expires_after } : {}),
      expires_at: null,
      last_active_at: now(),
      metadata: isRecord(b.metadata) ? b.metadata : {},
    };
    const store: EmulatedVectorStore = { object, files: new Map() };
    this.state.vectorStores.set(object.id as string, store);
    for (const id of fileIds) this.addFile(store, id);
    return this.storeObject(store);
  }

  store(id: string): EmulatedVectorStore {
    const found = this.state.vectorStores.get(id);
    if (!found) throw new FilesBadRequest(`No vector store found with id '${id}'.`, 404, 'vector_store_id');
    return found;
  }

  /** Retrieving a store moves its in-progress files on, as polling the real service would see. */
  retrieveStore(id: string): Json {
    const store = this.store(id);
    for (const file of store.files.values()) this.process(file);
    return this.storeObject(store);
  }

  updateStore(id: string, body: unknown): Json {
    const store = this.store(id);
    const b = record(body, 'body');
    if (typeof b.name === 'string') store.object.name = b.name;
    if (isRecord(b.metadata)) store.object.metadata = b.metadata;
    if (isRecord(b.expires_after)) store.object.expires_after = b.expires_after;
    return this.storeObject(store);
  }

  deleteStore(id: string): Json {
    this.store(id);
    this.state.vectorStores.delete(id);
    for (const [batchId, batch] of this.state.fileBatches) if (batch.object.vector_store_id === id) this.state.fileBatches.delete(batchId);
    return { id, object: 'vector_store.deleted', deleted: true };
  }

  /** The store object with its counts and status derived from its files. */
  storeObject(store: EmulatedVectorStore): Json {
    const files = [...store.files.values()];
    const count = (status: string) => files.filter((f) => f.status === status).length;
    store.object.file_counts = { in_progress: count('in_progress'), completed: count('completed'), failed: count('failed'), cancelled: count('cancelled'), total: files.length };
    store.object.usage_bytes = files.filter((f) => f.status === 'completed').reduce((sum, f) => sum + (f.usage_bytes as number), 0);
    store.object.status = count('in_progress') > 0 ? 'in_progress' : 'completed';
    return store.object;
  }

  attach(storeId: string, body: unknown): Json {
    const store = this.store(storeId);
    const b = record(body, 'body');
    if (typeof b.file_id !== 'string' || !b.file_id) throw new FilesBadRequest("Missing required parameter: 'file_id'.", 400, 'file_id');
    this.file(b.file_id);
    return this.addFile(store, b.file_id, b.attributes);
  }

  storeFiles(storeId: string, filter: string | undefined): Json[] {
    return [...this.store(storeId).files.values()].filter((f) => !filter || f.status === filter);
  }

  retrieveStoreFile(storeId: string, fileId: string): Json {
    const file = this.storeFile(storeId, fileId);
    this.process(file);
    return file;
  }

  /** POST /vector_stores/{id}/files/{fileId}: replaces the file's attributes (what search filters read). */
  updateStoreFile(storeId: string, fileId: string, body: unknown): Json {
    const file = this.storeFile(storeId, fileId);
    file.attributes = attributes(record(body, 'body').attributes, true);
    return file;
  }

  /** The parsed text of a processed file, one page (files here are small). */
  storeFileContent(storeId: string, fileId: string): Json {
    const file = this.storeFile(storeId, fileId);
    const text = file.status === 'completed' ? this.file(fileId).bytes.toString('utf8') : '';
    return { object: 'vector_store.file_content.page', data: text ? [{ type: 'text', text }] : [], has_more: false, next_page: null };
  }

  /**
   * POST /vector_stores/{id}/search: the sentences of completed files sharing keywords with the
   * query, best first, one result per sentence (a "chunk"), narrowed by an attribute `filters`.
   */
  search(storeId: string, body: unknown): Json {
    const store = this.store(storeId);
    const b = record(body, 'body');
    const queries = typeof b.query === 'string' ? [b.query] : Array.isArray(b.query) && b.query.every((q) => typeof q === 'string') ? (b.query as string[]) : undefined;
    if (!queries || queries.length === 0) throw new FilesBadRequest('`query` is required: a string or an array of strings.', 400, 'query');
    const max = b.max_num_results === undefined ? 10 : Number(b.max_num_results);
    if (!Number.isInteger(max) || max < 1 || max > 50) throw new FilesBadRequest('`max_num_results` must be an integer from 1 to 50.', 400, 'max_num_results');
    const filter = b.filters === undefined || b.filters === null ? () => true : attributeFilter(b.filters, 'filters');
    const hits = searchFileHits(this.state, [storeId], queries.join(' ')).filter((hit) => filter((store.files.get(hit.fileId)?.attributes ?? {}) as Json));
    return {
      object: 'vector_store.search_results.page',
      search_query: queries,
      data: hits.slice(0, max).map((hit) => ({
        file_id: hit.fileId,
        filename: hit.filename,
        score: hit.score,
        attributes: store.files.get(hit.fileId)?.attributes ?? {},
        content: [{ type: 'text', text: hit.sentence }],
      })),
      has_more: false,
      next_page: null,
    };
  }

  detach(storeId: string, fileId: string): Json {
    this.storeFile(storeId, fileId);
    this.store(storeId).files.delete(fileId);
    return { id: fileId, object: 'vector_store.file.deleted', deleted: true };
  }

  createBatch(storeId: string, body: unknown, context: RouteContext): Json {
    const store = this.store(storeId);
    const b = record(body, 'body');
    const fromFiles = Array.isArray(b.files) ? b.files.map((f, i) => (isRecord(f) && typeof f.file_id === 'string' ? f.file_id : badParam(`files[${i}].file_id`))) : [];
    const fileIds = [...stringArray(b.file_ids, 'file_ids'), ...fromFiles];
    if (fileIds.length === 0) throw new FilesBadRequest('A file batch needs `file_ids` or `files`.', 400, 'file_ids');
    for (const id of fileIds) this.file(id);
    for (const id of fileIds) this.addFile(store, id);
    const batch: EmulatedFileBatch = {
      object: { id: context.ids.next('vsfb_'), object: 'vector_store.files_batch', created_at: now(), vector_store_id: storeId, status: 'in_progress', file_counts: {} },
      fileIds,
    };
    this.state.fileBatches.set(batch.object.id as string, batch);
    return this.batchObject(batch, store);
  }

  retrieveBatch(storeId: string, batchId: string): Json {
    const { batch, store } = this.batch(storeId, batchId);
    for (const id of batch.fileIds) {
      const file = store.files.get(id);
      if (file) this.process(file);
    }
    return this.batchObject(batch, store);
  }

  cancelBatch(storeId: string, batchId: string): Json {
    const { batch, store } = this.batch(storeId, batchId);
    for (const id of batch.fileIds) {
      const file = store.files.get(id);
      if (file?.status === 'in_progress') file.status = 'cancelled';
    }
    const object = this.batchObject(batch, store);
    object.status = 'cancelled';
    return object;
  }

  batchFiles(storeId: string, batchId: string, filter: string | undefined): Json[] {
    const { batch, store } = this.batch(storeId, batchId);
    return batch.fileIds.flatMap((id) => {
      const file = store.files.get(id);
      return file && (!filter || file.status === filter) ? [file] : [];
    });
  }

  private batch(storeId: string, batchId: string): { batch: EmulatedFileBatch; store: EmulatedVectorStore } {
    const store = this.store(storeId);
    const batch = this.state.fileBatches.get(batchId);
    if (!batch || batch.object.vector_store_id !== storeId) throw new FilesBadRequest(`No file batch found with id '${batchId}' in vector store '${storeId}'.`, 404, 'batch_id');
    return { batch, store };
  }

  private batchObject(batch: EmulatedFileBatch, store: EmulatedVectorStore): Json {
    const files = batch.fileIds.map((id) => store.files.get(id)).filter((f): f is Json => f !== undefined);
    const count = (status: string) => files.filter((f) => f.status === status).length;
    batch.object.file_counts = { in_progress: count('in_progress'), completed: count('completed'), failed: count('failed'), cancelled: count('cancelled'), total: files.length };
    if (batch.object.status === 'in_progress' && count('in_progress') === 0) batch.object.status = 'completed';
    return batch.object;
  }

  private storeFile(storeId: string, fileId: string): Json {
    const found = this.store(storeId).files.get(fileId);
    if (!found) throw new FilesBadRequest(`No file '${fileId}' in vector store '${storeId}'.`, 404, 'file_id');
    return found;
  }

  private addFile(store: EmulatedVectorStore, fileId: string, attributesOf?: unknown): Json {
    const existing = store.files.get(fileId);
    if (existing) return existing;
    const file: Json = {
      id: fileId,
      object: 'vector_store.file',
      usage_bytes: this.file(fileId).bytes.length,
      created_at: now(),
      vector_store_id: store.object.id,
      status: 'in_progress',
      last_error: null,
      chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } },
      attributes: attributes(attributesOf, false),
    };
    store.files.set(fileId, file);
    store.object.last_active_at = now();
    return file;
  }

  /** One processing step: in_progress -> completed, or failed for a type file search can't read. */
  private process(file: Json): void {
    if (file.status !== 'in_progress') return;
    const name = (this.state.files.get(file.id as string)?.object.filename as string | undefined) ?? '';
    const extension = /\.([^.]+)$/.exec(name)?.[1]?.toLowerCase() ?? '';
    if (SEARCHABLE.has(extension)) {
      file.status = 'completed';
      return;
    }
    file.status = 'failed';
    file.last_error = { code: 'unsupported_file', message: `File type ${extension ? `'.${extension}'` : '(no extension)'} of '${name}' is not supported for file search.` };
  }
}

/** A match of a question in the searchable files of some vector stores. */
export interface FileSearchHit {
  fileId: string;
  filename: string;
  /** The best-matching sentence, verbatim. */
  sentence: string;
  /** Share of the question's keywords the sentence contains, 0..1. */
  score: number;
}

/** Words too common to say what a question is about. */
const STOP_WORDS = new Set(
  'a an and are about any can could did do does for from have how i in is it its me my of on or our please say says tell that the their there these this those to was we were what whats when where which who whom why will with would you your file files document documents according'.split(' '),
);

function keywords(text: string): string[] {
  const words = text.toLowerCase().replace(/\[emulator:[^\]]*\]/g, ' ').match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.filter((w) => w.length > 2 && !STOP_WORDS.has(w)).map(stem))];
}

/** A crude stem, so "refunds" finds "refund" and "policies" finds "policy". */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/**
 * The sentence of the completed files in `storeIds` that shares the most keywords with
 * `question` (ties: the earlier store, file and sentence), or undefined when none shares one.
 */
export function searchFiles(state: FilesState, storeIds: readonly string[], question: string): FileSearchHit | undefined {
  return searchFileHits(state, storeIds, question)[0];
}

/** Every sentence of the completed files in `storeIds` sharing a keyword with `question`, best first (ties in file order). */
export function searchFileHits(state: FilesState, storeIds: readonly string[], question: string): FileSearchHit[] {
  const wanted = keywords(question);
  if (wanted.length === 0) return [];
  const hits: FileSearchHit[] = [];
  for (const storeId of new Set(storeIds)) {
    const store = state.vectorStores.get(storeId);
    if (!store) continue;
    for (const vsFile of store.files.values()) {
      if (vsFile.status !== 'completed') continue;
      const file = state.files.get(vsFile.id as string);
      if (!file) continue;
      for (const sentence of sentences(file.bytes.toString('utf8'))) {
        const have = new Set(keywords(sentence));
        const count = wanted.filter((w) => have.has(w)).length;
        if (count > 0) hits.push({ fileId: vsFile.id as string, filename: file.object.filename as string, sentence, score: count / wanted.length });
      }
    }
  }
  // A stable sort keeps the earlier store, file and sentence first among equals.
  return hits.sort((a, b) => b.score - a.score);
}

/** File attributes: at most 16 keys, values string, number or boolean. */
function attributes(value: unknown, required: boolean): Json {
  if (value === undefined || value === null) {
    if (required) throw new FilesBadRequest('`attributes` is required: an object of at most 16 string, number or boolean values.', 400, 'attributes');
    return {};
  }
  if (!isRecord(value) || Object.keys(value).length > 16 || Object.values(value).some((v) => !['string', 'number', 'boolean'].includes(typeof v))) {
    throw new FilesBadRequest('`attributes` must be an object of at most 16 string, number or boolean values.', 400, 'attributes');
  }
  return value;
}

const COMPARISONS: Record<string, (a: unknown, b: unknown) => boolean> = {
  eq: (a, b) => a === b,
  ne: (a, b) => a !== b,
  gt: (a, b) => typeof a === typeof b && (a as number) > (b as number),
  gte: (a, b) => typeof a === typeof b && (a as number) >= (b as number),
  lt: (a, b) => typeof a === typeof b && (a as number) < (b as number),
  lte: (a, b) => typeof a === typeof b && (a as number) <= (b as number),
  in: (a, b) => Array.isArray(b) && b.includes(a),
  nin: (a, b) => Array.isArray(b) && !b.includes(a),
};

/** A comparison (`{type, key, value}`) or compound (`{type: and|or, filters}`) attribute filter. */
function attributeFilter(filter: unknown, param: string): (attrs: Json) => boolean {
  if (!isRecord(filter)) throw new FilesBadRequest(`\`${param}\` must be a comparison or compound filter object.`, 400, param);
  if (filter.type === 'and' || filter.type === 'or') {
    if (!Array.isArray(filter.filters)) throw new FilesBadRequest(`\`${param}.filters\` must be an array of filters.`, 400, `${param}.filters`);
    const parts = filter.filters.map((f, i) => attributeFilter(f, `${param}.filters[${i}]`));
    return filter.type === 'and' ? (attrs) => parts.every((p) => p(attrs)) : (attrs) => parts.some((p) => p(attrs));
  }
  const compare = typeof filter.type === 'string' && Object.hasOwn(COMPARISONS, filter.type) ? COMPARISONS[filter.type] : undefined;
  if (!compare || typeof filter.key !== 'string') {
    throw new FilesBadRequest(`\`${param}\` must be {type: eq|ne|gt|gte|lt|lte|in|nin, key, value} or {type: and|or, filters}; got type ${JSON.stringify(filter.type)}.`, 400, param);
  }
  const { key, value } = filter;
  return (attrs) => compare(attrs[key], value);
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Oldest first, as `listPage` takes them: by creation time, then the ids' creation counter. */
function byCreation(items: Json[]): Json[] {
  return [...items].sort((a, b) => (a.created_at as number) - (b.created_at as number) || idNumber(a) - idNumber(b));
}

function idNumber(item: Json): number {
  return Number(/(\d+)$/.exec(String(item.id))?.[1] ?? 0);
}

function badParam(param: string): never {
  throw new FilesBadRequest(`\`${param}\` must be a string.`, 400, param);
}

function stringArray(value: unknown, param: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new FilesBadRequest(`\`${param}\` must be an array of file ids.`, 400, param);
  return value as string[];
}

function record(value: unknown, param: string): Json {
  if (!isRecord(value)) throw new FilesBadRequest(`${param} must be a JSON object.`, 400, param);
  return value;
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function now(): number {
  return Math.floor(Date.now() / 1000);
}
