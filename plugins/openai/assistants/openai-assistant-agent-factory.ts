import type OpenAI from 'openai';
import type { ResolutionContext } from 'inversify';
import {
  type AgentConfig,
  type AgentFactory,
  type AIAgent,
  AgentRunMiddleware,
  ConfigurationError,
  FunctionCallMiddleware,
  SerializationRegistry,
  resolveTools,
} from 'skein';
import { OpenAIAssistantAgent } from './openai-assistant-agent.js';
import {
  type OpenAIAssistantDefinition,
  type OpenAIAssistantExecutionOptions,
  type OpenAIAssistantResponseFormat,
  parseExecutionOptions,
  parseResponseFormat,
} from './openai-assistant-definition.js';
import type { OpenAIAssistantPollingOptions } from './openai-assistant-threads.js';

type Check = [test: (value: unknown) => boolean, expected: string];
const isString = (v: unknown) => typeof v === 'string';
const isBoolean = (v: unknown) => typeof v === 'boolean';
const isNumber = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const isStrings = (v: unknown) => Array.isArray(v) && v.every(isString);
const isPlainObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The keys an `openai-assistants` agent takes beyond the core ones, with their checks. Execution
 * options may also be given one by one at the top level (they merge into `executionOptions`).
 */
const ASSISTANT_KEYS: Record<string, Check> = {
  assistantId: [(v) => isString(v) && v !== '', 'a non-empty assistant id'],
  executionOptions: [isPlainObject, 'an object of execution options'],
  polling: [
    (v) => isPlainObject(v) && Object.entries(v as object).every(([k, n]) => (k === 'intervalMs' || k === 'timeoutMs') && isNumber(n) && (n as number) >= 0),
    'an object with intervalMs and/or timeoutMs (milliseconds)',
  ],
  enableCodeInterpreter: [isBoolean, 'true or false'],
  enableFileSearch: [isBoolean, 'true or false'],
  vectorStoreIds: [isStrings, 'an array of vector store ids'],
  codeInterpreterFileIds: [isStrings, 'an array of file ids'],
  metadata: [(v) => isPlainObject(v) && Object.values(v as object).every(isString), 'an object of string values'],
  topP: [isNumber, 'a number'],
  responseFormat: [() => true, 'a response format'],
  reuse: [isBoolean, 'true or false'],
};
/** Execution options accepted at the top level of the agent's config. */
const EXECUTION_KEYS = ['maxPromptTokens', 'maxCompletionTokens', 'parallelToolCalls', 'truncationMessageCount', 'additionalInstructions', 'toolCallBehavior'] as const;
/** Core keys that mean something for an assistant; the others are reported. */
const CORE_KEYS = new Set(['client', 'model', 'instructions', 'name', 'description', 'tools', 'temperature', 'maxOutputTokens', 'maxToolIterations', 'concurrency', 'keepPartial']);
const NOT_FOR_ASSISTANTS: Record<string, string> = {
  messageStore: 'assistant threads are kept by the service, so a message store has nothing to hold; remove it',
  history: 'the service builds the run context; use truncationMessageCount (keep the last N messages) or maxPromptTokens instead',
};

/** Every key an `openai-assistants` agent config may hold. */
export const OPENAI_ASSISTANT_CONFIG_KEYS: readonly string[] = [...CORE_KEYS, ...Object.keys(ASSISTANT_KEYS), ...EXECUTION_KEYS];

/**
 * The problems of an `openai-assistants` agent config, one message per bad key: an unknown key,
 * a key that means nothing for an assistant, or a value of the wrong type. No key is ignored.
 */
export function openAIAssistantConfigProblems(name: string, config: AgentConfig): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined || CORE_KEYS.has(key)) continue;
    const path = `agents.${name}.${key}`;
    if (NOT_FOR_ASSISTANTS[key]) {
      problems.push(`${path}: not used by openai-assistants agents: ${NOT_FOR_ASSISTANTS[key]}.`);
      continue;
    }
    const check = ASSISTANT_KEYS[key];
    if (check) {
      if (!check[0](value)) problems.push(`${path}: expected ${check[1]}, found ${JSON.stringify(value)}.`);
      continue;
    }
    if ((EXECUTION_KEYS as readonly string[]).includes(key)) continue; // checked with the execution options
    problems.push(`${path}: unknown key for an openai-assistants agent. Known keys: ${OPENAI_ASSISTANT_CONFIG_KEYS.join(', ')}.`);
  }
  if (!isString(config.assistantId) && !config.model) {
    problems.push(`agents.${name}: an openai-assistants agent needs \`model\` (to create an assistant) or \`assistantId\` (to use one).`);
  }
  return problems;
}

/**
 * Builds OpenAIAssistantAgents for `agents.<name>` entries with `client: 'openai-assistants'`.
 * Keys beyond the core ones: `assistantId` (use an existing assistant; otherwise the definition's
 * assistant is found, updated or created on first use), `executionOptions` (or its options one by
 * one: `maxPromptTokens`, `maxCompletionTokens`, `parallelToolCalls`, `truncationMessageCount`,
 * `additionalInstructions`, `toolCallBehavior`), `responseFormat`, `polling`,
 * `enableCodeInterpreter`, `enableFileSearch`, `vectorStoreIds`, `codeInterpreterFileIds`,
 * `metadata`, `topP`, `reuse`. `maxOutputTokens` is the run's `maxCompletionTokens`,
 * `maxToolIterations` its `toolCallBehavior.maxToolRounds`. Any other key (and `messageStore`,
 * `history`) is a ConfigurationError naming it: nothing is silently ignored. The container's
 * agent-run and function-call middleware apply as to ChatAgents (chat-client middleware does not:
 * the model calls happen on the service).
 */
export class OpenAIAssistantAgentFactory implements AgentFactory {
  constructor(private readonly client: () => OpenAI) {}

  createAgent(name: string, config: AgentConfig, context: ResolutionContext): AIAgent {
    const problems = openAIAssistantConfigProblems(name, config);
    const executionOptions = collect(problems, () => this.#executionOptions(name, config));
    const responseFormat = config.responseFormat === undefined ? undefined : collect(problems, () => parseResponseFormat(config.responseFormat, `agents.${name}.responseFormat`));
    if (problems.length) throw new ConfigurationError(problems);
    const definition: OpenAIAssistantDefinition = {
      id: config.assistantId as string | undefined,
      model: config.model ?? '',
      name: config.name ?? name,
      description: config.description,
      instructions: config.instructions,
      temperature: config.temperature,
      topP: config.topP as number | undefined,
      enableCodeInterpreter: config.enableCodeInterpreter === true,
      enableFileSearch: config.enableFileSearch === true,
      vectorStoreIds: config.vectorStoreIds as string[] | undefined,
      codeInterpreterFileIds: config.codeInterpreterFileIds as string[] | undefined,
      metadata: config.metadata as Record<string, string> | undefined,
      responseFormat: responseFormat as OpenAIAssistantResponseFormat | undefined,
      executionOptions,
    };
    return new OpenAIAssistantAgent({
      client: this.client(),
      name: config.name ?? name,
      definition,
      reuse: config.reuse as boolean | undefined,
      tools: resolveTools(name, config, context),
      polling: config.polling as OpenAIAssistantPollingOptions | undefined,
      serializationRegistry: context.get<SerializationRegistry>(SerializationRegistry),
      concurrency: config.concurrency,
      middleware: {
        agentRun: context.getAll<AgentRunMiddleware>(AgentRunMiddleware, { optional: true }),
        functionCall: context.getAll<FunctionCallMiddleware>(FunctionCallMiddleware, { optional: true }),
      },
    });
  }

  /** The top-level options and the core keys that map to them, then `executionOptions` (which wins), checked. */
  #executionOptions(name: string, config: AgentConfig): OpenAIAssistantExecutionOptions {
    const topLevel: Record<string, unknown> = {};
    for (const key of EXECUTION_KEYS) if (config[key] !== undefined) topLevel[key] = config[key];
    if (config.maxOutputTokens !== undefined) topLevel.maxCompletionTokens ??= config.maxOutputTokens;
    if (config.maxToolIterations !== undefined) {
      topLevel.toolCallBehavior = { maxToolRounds: config.maxToolIterations, ...(topLevel.toolCallBehavior as object | undefined) };
    }
    const nested = config.executionOptions === undefined ? {} : parseExecutionOptions(config.executionOptions, `agents.${name}.executionOptions`);
    const own = parseExecutionOptions(topLevel, `agents.${name}`);
    const toolCallBehavior = nested.toolCallBehavior || own.toolCallBehavior ? { ...own.toolCallBehavior, ...nested.toolCallBehavior } : undefined;
    return { ...own, ...nested, ...(toolCallBehavior ? { toolCallBehavior } : {}) };
  }
}

/** Runs `read`; its error becomes a problem in the list (so every problem is reported at once). */
function collect<T>(problems: string[], read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    problems.push((error as Error).message);
    return undefined;
  }
}
