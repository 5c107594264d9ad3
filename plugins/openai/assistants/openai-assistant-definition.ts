import type OpenAI from 'openai';
import { type ChatMessage, checkShape, DEFINITION_METADATA_KEY, describe, FINGERPRINT_METADATA_KEY, type JsonObject, SerializationError, type ShapeSpec, type ToolDeclaration } from 'skein';

/**
 * How tool calls are handled at assistant or run scope. `toolChoice` becomes the run's
 * `tool_choice`; `maxToolRounds` bounds the requires_action rounds of one run (further calls
 * are answered with an error output, so the run can still finish).
 */
export interface OpenAIAssistantToolCallBehavior {
  toolChoice?: 'auto' | 'none' | 'required' | { name: string };
  maxToolRounds?: number;
}

/**
 * Run defaults held at assistant scope. They are not part of the remote assistant, so they are
 * persisted in its metadata (key `__run_options`) and come back with `retrieve`.
 */
export interface OpenAIAssistantExecutionOptions {
  maxPromptTokens?: number;
  maxCompletionTokens?: number;
  parallelToolCalls?: boolean;
  /** Keep only the last N messages of the thread in the run's context. */
  truncationMessageCount?: number;
  additionalInstructions?: string;
  temperature?: number;
  topP?: number;
  toolCallBehavior?: OpenAIAssistantToolCallBehavior;
  /**
   * What the run answers in: `'json_object'` (any JSON object), `{ type: 'json_schema', name,
   * schema }` (JSON matching `schema`: a JSON Schema object or a zod schema), `'text'` or
   * `'auto'` (the assistant's own setting). Kept as JSON: a zod schema is converted on parse.
   */
  responseFormat?: OpenAIAssistantResponseFormat;
}

/** Something that converts itself to JSON Schema (a zod 4 schema does). */
export interface JsonSchemaConvertible {
  toJSONSchema(options?: { target?: 'draft-7' }): unknown;
}

export type OpenAIAssistantResponseFormat =
  | 'auto'
  | 'text'
  | 'json_object'
  | { type: 'json_schema'; name: string; schema: JsonObject | JsonSchemaConvertible; description?: string; strict?: boolean };

/** A response format as JSON (the schema converted), what metadata, thread state and requests hold. */
export type OpenAIAssistantResponseFormatJson = Exclude<OpenAIAssistantResponseFormat, { type: 'json_schema' }> | { type: 'json_schema'; name: string; schema: JsonObject; description?: string; strict?: boolean };

/** Everything an assistant is: used to create one, to inspect one, and when listing them. */
export interface OpenAIAssistantDefinition {
  /** Set on an existing assistant; absent when the definition is used to create one. */
  id?: string;
  model: string;
  name?: string;
  description?: string;
  instructions?: string;
  enableCodeInterpreter?: boolean;
  enableFileSearch?: boolean;
  codeInterpreterFileIds?: string[];
  vectorStoreIds?: string[];
  /** The remote function tools (read back from the service; Skein tools add theirs on create). */
  functions?: ToolDeclaration[];
  /** User metadata (without the execution options entry). */
  metadata?: Record<string, string>;
  temperature?: number;
  topP?: number;
  /** The assistant's own response format (the service applies it when a run sets none). */
  responseFormat?: OpenAIAssistantResponseFormat;
  executionOptions?: OpenAIAssistantExecutionOptions;
}

/** Options of one run; they win over the thread's and the assistant's. */
export interface OpenAIAssistantInvocationOptions extends OpenAIAssistantExecutionOptions {
  model?: string;
  /** Replaces the assistant's instructions for this run. */
  instructions?: string;
  /** Messages added to the thread with the run (atomically with it). */
  additionalMessages?: ChatMessage[];
  metadata?: Record<string, string>;
  enableCodeInterpreter?: boolean;
  enableFileSearch?: boolean;
}

/**
 * Options of a thread; they win over the assistant definition. `executionOptions` are run
 * defaults for every run on the thread and travel with the serialized thread.
 */
export interface OpenAIThreadCreationOptions {
  messages?: ChatMessage[];
  metadata?: Record<string, string>;
  codeInterpreterFileIds?: string[];
  vectorStoreIds?: string[];
  executionOptions?: OpenAIAssistantExecutionOptions;
}

export const RUN_OPTIONS_METADATA_KEY = '__run_options';
/** The service keeps metadata values up to this many characters. */
const METADATA_VALUE_LIMIT = 512;
/** Where a thread keeps its execution options in `thread.state`. */
export const THREAD_STATE_KEY = 'openaiAssistants';

const EXECUTION_OPTION_FIELDS: ShapeSpec = {
  optional: {
    maxPromptTokens: 'number',
    maxCompletionTokens: 'number',
    parallelToolCalls: 'boolean',
    truncationMessageCount: 'number',
    additionalInstructions: 'string',
    temperature: 'number',
    topP: 'number',
    toolCallBehavior: 'object',
    responseFormat: 'json',
  },
};
const POSITIVE_INTEGER_OPTIONS = ['maxPromptTokens', 'maxCompletionTokens', 'truncationMessageCount'] as const;
const TOOL_CHOICES: readonly unknown[] = ['auto', 'none', 'required'];

/**
 * Reads execution options from untrusted JSON (metadata or a serialized thread); `path` names the
 * bad field. Checked by hand rather than with zod: this module loads with `skein/openai`, and zod
 * alone would add about 5 MiB to every process that imports it.
 */
export function parseExecutionOptions(value: unknown, path: string): OpenAIAssistantExecutionOptions {
  const options = checkShape(value, path, EXECUTION_OPTION_FIELDS) as OpenAIAssistantExecutionOptions;
  for (const key of POSITIVE_INTEGER_OPTIONS) {
    const n = options[key];
    if (n !== undefined && !(Number.isInteger(n) && n > 0)) {
      throw new SerializationError(`${path}.${key}`, `invalid execution option: expected a positive integer, found ${describe(n)}.`);
    }
  }
  const out: OpenAIAssistantExecutionOptions = { ...options };
  if (options.toolCallBehavior !== undefined) out.toolCallBehavior = parseToolCallBehavior(options.toolCallBehavior, `${path}.toolCallBehavior`);
  if (options.responseFormat !== undefined) out.responseFormat = parseResponseFormat(options.responseFormat, `${path}.responseFormat`);
  return out;
}

const RESPONSE_FORMAT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * A response format checked and as JSON: a zod schema becomes its JSON Schema (draft 7), a JSON
 * Schema is copied. Bad values name their path and say what is accepted.
 */
export function parseResponseFormat(value: unknown, path: string): OpenAIAssistantResponseFormatJson {
  if (value === 'auto' || value === 'text' || value === 'json_object') return value;
  const expected = `expected "auto", "text", "json_object" or { type: "json_schema", name, schema } (a JSON Schema object or a zod schema)`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SerializationError(path, `invalid response format: ${expected}, found ${describe(value)}.`);
  const format = value as Record<string, unknown>;
  if (format.type === 'json_object' || format.type === 'text') return format.type;
  if (format.type !== 'json_schema') throw new SerializationError(`${path}.type`, `invalid response format: ${expected}, found type ${describe(format.type)}.`);
  const schemaSource = format.schema;
  const schema = isConvertible(schemaSource) ? jsonSchemaOf(schemaSource) : schemaSource;
  const checked = checkShape({ ...format, schema }, path, { required: { type: 'string', name: 'string', schema: 'object' }, optional: { description: 'string', strict: 'boolean' } });
  if (!RESPONSE_FORMAT_NAME.test(checked.name as string)) {
    throw new SerializationError(`${path}.name`, `invalid response format name: expected 1-64 letters, digits, "_" or "-", found ${describe(checked.name)}.`);
  }
  const out: OpenAIAssistantResponseFormatJson = { type: 'json_schema', name: checked.name as string, schema: JSON.parse(JSON.stringify(schema)) as JsonObject };
  if (typeof checked.description === 'string') out.description = checked.description;
  if (typeof checked.strict === 'boolean') out.strict = checked.strict;
  return out;
}

function isConvertible(value: unknown): value is JsonSchemaConvertible {
  return typeof value === 'object' && value !== null && typeof (value as JsonSchemaConvertible).toJSONSchema === 'function';
}

function jsonSchemaOf(source: JsonSchemaConvertible): JsonObject {
  const schema = source.toJSONSchema({ target: 'draft-7' }) as JsonObject;
  const { $schema: _dropped, ...rest } = schema;
  return rest;
}

/** A response format as the wire's `response_format`. */
export function responseFormatParam(format: OpenAIAssistantResponseFormatJson | undefined): OpenAI.Beta.Threads.AssistantResponseFormatOption | undefined {
  if (format === undefined) return undefined;
  if (format === 'auto') return 'auto';
  if (format === 'text' || format === 'json_object') return { type: format };
  const { name, schema, description, strict } = format;
  return { type: 'json_schema', json_schema: { name, schema, ...(description !== undefined ? { description } : {}), ...(strict !== undefined ? { strict } : {}) } };
}

/** The wire's `response_format` -> a response format (undefined for the default). */
function responseFormatFromWire(value: unknown): OpenAIAssistantResponseFormatJson | undefined {
  if (value === null || value === undefined || value === 'auto') return undefined;
  if (typeof value !== 'object') return undefined;
  const wire = value as { type?: string; json_schema?: { name: string; schema?: JsonObject; description?: string; strict?: boolean | null } };
  if (wire.type === 'json_object' || wire.type === 'text') return wire.type === 'text' ? undefined : 'json_object';
  if (wire.type === 'json_schema' && wire.json_schema) {
    const j = wire.json_schema;
    return { type: 'json_schema', name: j.name, schema: j.schema ?? {}, ...(j.description ? { description: j.description } : {}), ...(typeof j.strict === 'boolean' ? { strict: j.strict } : {}) };
  }
  return undefined;
}

function parseToolCallBehavior(value: unknown, path: string): OpenAIAssistantToolCallBehavior {
  const behavior = checkShape(value, path, { optional: { toolChoice: 'json', maxToolRounds: 'number' } }) as OpenAIAssistantToolCallBehavior;
  const { toolChoice, maxToolRounds } = behavior;
  if (toolChoice !== undefined && !TOOL_CHOICES.includes(toolChoice)) {
    if (typeof toolChoice !== 'object') {
      throw new SerializationError(`${path}.toolChoice`, `invalid execution option: expected "auto", "none", "required" or { name }, found ${describe(toolChoice)}.`);
    }
    checkShape(toolChoice, `${path}.toolChoice`, { required: { name: 'string' } });
  }
  if (maxToolRounds !== undefined && !(Number.isInteger(maxToolRounds) && maxToolRounds >= 0)) {
    throw new SerializationError(`${path}.maxToolRounds`, `invalid execution option: expected a non-negative integer, found ${describe(maxToolRounds)}.`);
  }
  return typeof toolChoice === 'object' ? { ...behavior, toolChoice: { ...toolChoice } } : { ...behavior };
}

/**
 * What an assistant thread keeps in `thread.state` (so it travels with the serialized thread):
 * its run defaults, the assistant it was made with, and the files Skein uploaded for its
 * messages (deleted with the thread).
 */
export interface AssistantThreadState {
  executionOptions?: OpenAIAssistantExecutionOptions;
  assistantId?: string;
  uploadedFileIds?: string[];
}

/** The thread's own state (from `thread.state`), checked; bad fields name their path. */
export function readThreadState(state: JsonObject): AssistantThreadState {
  const own = state[THREAD_STATE_KEY];
  if (own === undefined) return {};
  const path = `$.state.${THREAD_STATE_KEY}`;
  const shape = checkShape(own, path, { optional: { executionOptions: 'object', assistantId: 'string', uploadedFileIds: 'array' } });
  const out: AssistantThreadState = {};
  if (shape.executionOptions !== undefined) out.executionOptions = parseExecutionOptions(shape.executionOptions, `${path}.executionOptions`);
  if (shape.assistantId !== undefined) out.assistantId = shape.assistantId as string;
  if (shape.uploadedFileIds !== undefined) {
    const ids = shape.uploadedFileIds as unknown[];
    const bad = ids.findIndex((id) => typeof id !== 'string');
    if (bad >= 0) throw new SerializationError(`${path}.uploadedFileIds[${bad}]`, `expected a file id string, found ${describe(ids[bad])}.`);
    out.uploadedFileIds = ids as string[];
  }
  return out;
}

/** Changes the thread's own state (a shallow merge). */
export function updateThreadState(thread: { state: JsonObject }, change: Partial<AssistantThreadState>): void {
  const current = readThreadState(thread.state);
  const next = { ...current, ...change } as JsonObject;
  for (const key of Object.keys(next)) if (next[key] === undefined) delete next[key];
  const { [THREAD_STATE_KEY]: _previous, ...others } = thread.state;
  // An empty entry is left out, so a thread with nothing to keep serializes as before.
  thread.state = Object.keys(next).length ? { ...others, [THREAD_STATE_KEY]: next } : others;
}

/** The thread's execution options (from `thread.state`), checked. */
export function threadExecutionOptions(state: JsonObject): OpenAIAssistantExecutionOptions | undefined {
  return readThreadState(state).executionOptions;
}

/** Later layers win key by key; toolCallBehavior merges too. */
export function mergeExecutionOptions(...layers: (OpenAIAssistantExecutionOptions | undefined)[]): OpenAIAssistantExecutionOptions {
  const merged: OpenAIAssistantExecutionOptions = {};
  for (const layer of layers) {
    if (!layer) continue;
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      if (key === 'toolCallBehavior') merged.toolCallBehavior = { ...merged.toolCallBehavior, ...(value as OpenAIAssistantToolCallBehavior) };
      else (merged as Record<string, unknown>)[key] = value;
    }
  }
  return merged;
}

type Assistant = OpenAI.Beta.Assistants.Assistant;
type AssistantTool = OpenAI.Beta.Assistants.AssistantTool;

/** The remote assistant -> its definition; execution options come out of the metadata. */
export function definitionFromAssistant(assistant: Assistant): OpenAIAssistantDefinition {
  const metadata = { ...((assistant.metadata ?? {}) as Record<string, string>) };
  const rawOptions = metadata[RUN_OPTIONS_METADATA_KEY];
  delete metadata[RUN_OPTIONS_METADATA_KEY];
  delete metadata[DEFINITION_METADATA_KEY];
  delete metadata[FINGERPRINT_METADATA_KEY];
  const definition: OpenAIAssistantDefinition = { id: assistant.id, model: assistant.model };
  if (assistant.name) definition.name = assistant.name;
  if (assistant.description) definition.description = assistant.description;
  if (assistant.instructions) definition.instructions = assistant.instructions;
  const tools = assistant.tools ?? [];
  if (tools.some((t) => t.type === 'code_interpreter')) definition.enableCodeInterpreter = true;
  if (tools.some((t) => t.type === 'file_search')) definition.enableFileSearch = true;
  const functions = tools.flatMap((t) =>
    t.type === 'function' ? [{ name: t.function.name, description: t.function.description, parameters: (t.function.parameters ?? {}) as JsonObject }] : [],
  );
  if (functions.length) definition.functions = functions;
  const fileIds = assistant.tool_resources?.code_interpreter?.file_ids;
  if (fileIds?.length) definition.codeInterpreterFileIds = fileIds;
  const stores = assistant.tool_resources?.file_search?.vector_store_ids;
  if (stores?.length) definition.vectorStoreIds = stores;
  if (Object.keys(metadata).length) definition.metadata = metadata;
  if (typeof assistant.temperature === 'number') definition.temperature = assistant.temperature;
  if (typeof assistant.top_p === 'number') definition.topP = assistant.top_p;
  const format = responseFormatFromWire(assistant.response_format);
  if (format !== undefined) definition.responseFormat = format;
  if (rawOptions !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(rawOptions);
    } catch {
      throw new SerializationError(`metadata.${RUN_OPTIONS_METADATA_KEY}`, `assistant ${assistant.id} holds execution options that are not JSON.`);
    }
    definition.executionOptions = parseExecutionOptions(json, `metadata.${RUN_OPTIONS_METADATA_KEY}`);
  }
  return definition;
}

/**
 * A definition (plus Skein tools) -> the create request. A response format goes to the
 * assistant's own `response_format` (also one given in `executionOptions`): metadata values are
 * limited to 512 characters, too few for a JSON Schema.
 */
export function assistantCreateParams(definition: OpenAIAssistantDefinition, tools: readonly ToolDeclaration[]): OpenAI.Beta.Assistants.AssistantCreateParams {
  const metadata: Record<string, string> = { ...definition.metadata };
  const { responseFormat: runFormat, ...runOptions } = definition.executionOptions ? parseExecutionOptions(definition.executionOptions, 'definition.executionOptions') : {};
  if (Object.keys(runOptions).length) {
    const json = JSON.stringify(runOptions);
    if (json.length > METADATA_VALUE_LIMIT) {
      throw new SerializationError(
        'definition.executionOptions',
        `the execution options take ${json.length} characters as JSON, but they are kept in the assistant's metadata, whose values hold at most ${METADATA_VALUE_LIMIT}. Shorten them (e.g. put long additionalInstructions in the definition's instructions, or set them per thread or run).`,
      );
    }
    metadata[RUN_OPTIONS_METADATA_KEY] = json;
  }
  const format = definition.responseFormat !== undefined ? parseResponseFormat(definition.responseFormat, 'definition.responseFormat') : (runFormat as OpenAIAssistantResponseFormatJson | undefined);
  const declared = new Map<string, ToolDeclaration>();
  for (const f of [...(definition.functions ?? []), ...tools]) declared.set(f.name, f);
  return {
    model: definition.model,
    name: definition.name,
    description: definition.description,
    instructions: definition.instructions,
    tools: [...hostedTools(definition.enableCodeInterpreter, definition.enableFileSearch), ...[...declared.values()].map(functionTool)],
    tool_resources: toolResources(definition.codeInterpreterFileIds, definition.vectorStoreIds),
    metadata: Object.keys(metadata).length ? metadata : undefined,
    temperature: definition.temperature,
    top_p: definition.topP,
    response_format: responseFormatParam(format),
  };
}

export function hostedTools(codeInterpreter: boolean | undefined, fileSearch: boolean | undefined): AssistantTool[] {
  const tools: AssistantTool[] = [];
  if (codeInterpreter) tools.push({ type: 'code_interpreter' });
  if (fileSearch) tools.push({ type: 'file_search' });
  return tools;
}

export function functionTool(declaration: ToolDeclaration): AssistantTool {
  return { type: 'function', function: { name: declaration.name, description: declaration.description, parameters: declaration.parameters } };
}

export function toolResources(fileIds: string[] | undefined, vectorStoreIds: string[] | undefined) {
  if (!fileIds?.length && !vectorStoreIds?.length) return undefined;
  return {
    ...(fileIds?.length ? { code_interpreter: { file_ids: fileIds } } : {}),
    ...(vectorStoreIds?.length ? { file_search: { vector_store_ids: vectorStoreIds } } : {}),
  };
}
