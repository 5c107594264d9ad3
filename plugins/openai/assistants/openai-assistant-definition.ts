import type OpenAI from 'openai';
import { type ChatMessage, checkShape, describe, type JsonObject, SerializationError, type ShapeSpec, type ToolDeclaration } from 'skein';

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
}

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
  const behavior = options.toolCallBehavior;
  return behavior === undefined ? { ...options } : { ...options, toolCallBehavior: parseToolCallBehavior(behavior, `${path}.toolCallBehavior`) };
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

/** The thread's execution options (from `thread.state`), checked. */
export function threadExecutionOptions(state: JsonObject): OpenAIAssistantExecutionOptions | undefined {
  const own = state[THREAD_STATE_KEY];
  if (own === undefined) return undefined;
  if (typeof own !== 'object' || own === null || Array.isArray(own)) {
    throw new SerializationError(`$.state.${THREAD_STATE_KEY}`, 'expected an object with executionOptions.');
  }
  const options = (own as JsonObject).executionOptions;
  return options === undefined ? undefined : parseExecutionOptions(options, `$.state.${THREAD_STATE_KEY}.executionOptions`);
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

/** A definition (plus Skein tools) -> the create request. */
export function assistantCreateParams(definition: OpenAIAssistantDefinition, tools: readonly ToolDeclaration[]): OpenAI.Beta.Assistants.AssistantCreateParams {
  const metadata: Record<string, string> = { ...definition.metadata };
  if (definition.executionOptions && Object.keys(definition.executionOptions).length) {
    metadata[RUN_OPTIONS_METADATA_KEY] = JSON.stringify(parseExecutionOptions(definition.executionOptions, 'definition.executionOptions'));
  }
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
