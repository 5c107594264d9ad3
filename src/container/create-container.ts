import type { Container, ContainerModule, ResolutionContext } from 'inversify';
import { ChatAgent } from '../agents/chat-agent.js';
import type { AIAgent } from '../agents/ai-agent.js';
import { ContextProvider } from '../agents/context-provider.js';
import { AgentRunMiddleware, ChatClientMiddleware, FunctionCallMiddleware } from '../agents/middleware.js';
import { ChatClient } from '../clients/chat-client.js';
import { ConfigurationError } from '../errors/skein-error.js';
import { ContentKindSerializer } from '../serialization/content-kind-serializer.js';
import { SerializationRegistry, SerializationRegistryImpl } from '../serialization/serialization-registry.js';
import { ThreadSerializer } from '../serialization/thread-serializer.js';
import { ChatMessageStoreFactory } from '../threads/chat-message-store.js';
import { InMemoryChatMessageStoreFactory } from '../threads/in-memory-chat-message-store.js';
import { DefaultThreadFactory, ThreadFactory } from '../threads/thread-factory.js';
import { type ChatReducer, MessageCountReducer, TokenBudgetReducer } from '../threads/chat-reducer.js';
import { SummarizingReducer } from '../threads/summarizing-reducer.js';
import { AITool } from '../tools/ai-tool.js';
import { AgentFactory } from './agent-factory.js';
import { agentToken } from './agent-token.js';
import { readConfigFile } from './config-file.js';
import { AGENT_CONFIG_KEYS, type AgentConfig, type SkeinConfig } from './skein-config.js';
import { SkeinPlugin } from './skein-plugin.js';
import { containerModule, inversify, newContainer } from './inversify-runtime.js';

export const IN_MEMORY_STORE_ID = 'in-memory';

/**
 * Builds a container from config: the core bindings, each plugin's module, and one binding per
 * agent under `agentToken(name)`. Config problems are reported together, before anything binds.
 */
export function createContainer(config?: SkeinConfig): Container;
/** From a JSON or YAML config file (plugins by id or module path, `${ENV}` interpolation). */
export function createContainer(configFile: string, options?: { env?: NodeJS.ProcessEnv; parent?: Container }): Promise<Container>;
export function createContainer(
  config: SkeinConfig | string = {},
  options: { env?: NodeJS.ProcessEnv; parent?: Container } = {},
): Container | Promise<Container> {
  if (typeof config === 'string') {
    return readConfigFile(config, options.env).then(({ config: fileConfig, problems }) =>
      buildContainer({ ...fileConfig, parent: options.parent }, problems),
    );
  }
  return buildContainer(config, []);
}

function buildContainer(config: SkeinConfig, earlierProblems: string[]): Container {
  validateConfig(config, earlierProblems);
  const container = newContainer(config.parent ? { parent: config.parent } : undefined);
  container.load(coreModule(config));
  for (const plugin of config.plugins ?? []) {
    container.bind(SkeinPlugin).toConstantValue(plugin);
    container.load(plugin.module);
  }
  for (const [name, agentConfig] of Object.entries(config.agents ?? {})) {
    container
      .bind(agentToken(name))
      .toDynamicValue((context) => createAgent(name, agentConfig, context))
      .inSingletonScope();
  }
  return container;
}

function coreModule(config: SkeinConfig): ContainerModule {
  return containerModule(({ bind }) => {
    bind(InMemoryChatMessageStoreFactory).toSelf().inSingletonScope();
    // whenDefault: an unconstrained binding would also answer named requests (`sqlite`, ...).
    bind(ChatMessageStoreFactory)
      .toDynamicValue((context) => context.get(InMemoryChatMessageStoreFactory))
      .whenDefault();
    bind(DefaultThreadFactory).toSelf().inSingletonScope();
    bind(ThreadFactory)
      .toDynamicValue((context) => context.get(DefaultThreadFactory))
      .whenDefault();
    bind(SerializationRegistry)
      .toDynamicValue((context) => {
        const registry = SerializationRegistryImpl.withDefaults(config.serializationLimits);
        for (const s of context.getAll<ThreadSerializer>(ThreadSerializer, { optional: true })) registry.registerThreadSerializer(s);
        for (const k of context.getAll<ContentKindSerializer>(ContentKindSerializer, { optional: true })) registry.registerContentKind(k);
        return registry;
      })
      .inSingletonScope();
    for (const tool of config.tools ?? []) bind(AITool).toConstantValue(tool);
  });
}

function createAgent(name: string, config: AgentConfig, context: ResolutionContext): AIAgent {
  const factory = context.get<AgentFactory>(AgentFactory, { name: config.client, optional: true });
  if (factory) return factory.createAgent(name, config, context);
  return new ChatAgent({
    chatClient: context.get<ChatClient>(ChatClient, { name: config.client }),
    name: config.name ?? name,
    description: config.description,
    instructions: config.instructions,
    tools: resolveTools(name, config, context),
    chatOptions: {
      model: config.model,
      temperature: config.temperature,
      maxOutputTokens: config.maxOutputTokens,
      additionalProperties: providerOptions(config),
    },
    chatMessageStoreFactory: resolveStoreFactory(config.messageStore, context),
    threadFactory: context.get<ThreadFactory>(ThreadFactory, { name: config.client, optional: true }) ?? context.get<ThreadFactory>(ThreadFactory),
    serializationRegistry: context.get<SerializationRegistry>(SerializationRegistry),
    maxToolIterations: config.maxToolIterations,
    concurrency: config.concurrency,
    keepPartial: config.keepPartial,
    chatReducer: historyReducer(config.history),
    contextProviders: context.getAll<ContextProvider>(ContextProvider, { optional: true }),
    middleware: {
      agentRun: context.getAll<AgentRunMiddleware>(AgentRunMiddleware, { optional: true }),
      functionCall: context.getAll<FunctionCallMiddleware>(FunctionCallMiddleware, { optional: true }),
      chatClient: context.getAll<ChatClientMiddleware>(ChatClientMiddleware, { optional: true }),
    },
  });
}

export function resolveStoreFactory(id: string | undefined, context: ResolutionContext): ChatMessageStoreFactory {
  if (id === undefined || id === IN_MEMORY_STORE_ID) return context.get(InMemoryChatMessageStoreFactory);
  return context.get<ChatMessageStoreFactory>(ChatMessageStoreFactory, { name: id });
}

export function resolveTools(agentName: string, config: AgentConfig, context: ResolutionContext): AITool[] {
  if (!config.tools?.length) return [];
  const available = new Map(context.getAll<AITool>(AITool, { optional: true }).map((t) => [t.declaration.name, t]));
  return config.tools.map((toolName) => {
    const found = available.get(toolName);
    if (!found) {
      throw new ConfigurationError(
        `agents.${agentName}.tools: no tool named "${toolName}" is bound; available: ${[...available.keys()].join(', ') || 'none'}. Add it to config.tools or bind it under AITool.`,
      );
    }
    return found;
  });
}

/** Config keys the core does not know are provider options (e.g. `store: false` for Responses). */
export function providerOptions(config: AgentConfig): Record<string, unknown> | undefined {
  const extras = Object.entries(config).filter(([key]) => !AGENT_CONFIG_KEYS.has(key));
  return extras.length ? Object.fromEntries(extras) : undefined;
}

function isHistoryLimit(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  const positive = (v: unknown) => Number.isInteger(v) && (v as number) > 0;
  return entries.length > 0 && entries.every(([k, v]) => ((k === 'maxMessages' || k === 'maxTokens') && positive(v)) || (k === 'summarize' && isSummarize(v)));
}

function isSummarize(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const { maxMessages, keep, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length || !Number.isInteger(maxMessages) || (maxMessages as number) < 2) return false;
  return keep === undefined || (Number.isInteger(keep) && (keep as number) >= 1 && (keep as number) < (maxMessages as number));
}

/** The reducer an agent's `history` config asks for (summarize wins, then a token budget, then a count). */
function historyReducer(history: AgentConfig['history']): ChatReducer | undefined {
  if (history?.summarize !== undefined) return new SummarizingReducer(history.summarize);
  if (history?.maxTokens !== undefined) return new TokenBudgetReducer({ maxTokens: history.maxTokens });
  if (history?.maxMessages !== undefined) return new MessageCountReducer(history.maxMessages);
  return undefined;
}

type FieldRule = [check: (value: unknown) => boolean, expected: string];
const isString = (v: unknown) => typeof v === 'string';
const isInt = (v: unknown) => Number.isInteger(v);
const AGENT_FIELD_RULES: Record<string, FieldRule> = {
  client: [(v) => isString(v) && v !== '', 'a non-empty string'],
  model: [isString, 'a string'],
  instructions: [isString, 'a string'],
  name: [(v) => isString(v) && v !== '', 'a non-empty string'],
  description: [isString, 'a string'],
  messageStore: [isString, 'a string'],
  tools: [(v) => Array.isArray(v) && v.every(isString), 'an array of tool names'],
  temperature: [(v) => typeof v === 'number' && Number.isFinite(v), 'a number'],
  maxOutputTokens: [(v) => isInt(v) && (v as number) > 0, 'a positive integer'],
  maxToolIterations: [(v) => isInt(v) && (v as number) >= 0, 'a non-negative integer'],
  concurrency: [(v) => v === 'queue' || v === 'reject', '"queue" or "reject"'],
  keepPartial: [(v) => typeof v === 'boolean', 'true or false'],
  history: [isHistoryLimit, 'an object with a positive integer maxMessages and/or maxTokens, and/or summarize: { maxMessages (2 or more), keep (1 to maxMessages - 1) }'],
};

/** The core agent keys' types (provider keys are the plugin's to check); one problem per bad field. */
function agentProblems(name: string, agent: unknown): string[] {
  if (!agent || typeof agent !== 'object' || Array.isArray(agent)) return [`agents.${name}: expected an object with at least "client".`];
  const problems: string[] = [];
  const fields = agent as Record<string, unknown>;
  if (fields.client === undefined) problems.push(`agents.${name}.client: required; name the client a plugin provides, e.g. "openai-chat".`);
  for (const [key, [check, expected]] of Object.entries(AGENT_FIELD_RULES)) {
    const value = fields[key];
    if (value !== undefined && !check(value)) problems.push(`agents.${name}.${key}: expected ${expected}, found ${JSON.stringify(value)}.`);
  }
  return problems;
}

function validateConfig(config: SkeinConfig, earlierProblems: readonly string[]): void {
  const problems: string[] = [...earlierProblems];
  const plugins = config.plugins ?? [];
  const clients = new Set<string>();
  const stores = new Set<string>([IN_MEMORY_STORE_ID]);
  const seen = new Set<string>();
  plugins.forEach((plugin, i) => {
    if (!plugin || typeof plugin.id !== 'string' || !(plugin.module instanceof inversify().ContainerModule)) {
      problems.push(`plugins[${i}]: expected a SkeinPlugin ({ id, module: ContainerModule }), e.g. openaiPlugin({ apiKey }).`);
      return;
    }
    if (seen.has(plugin.id)) problems.push(`plugins[${i}]: plugin "${plugin.id}" is loaded twice.`);
    seen.add(plugin.id);
    plugin.clients?.forEach((c) => clients.add(c));
    plugin.stores?.forEach((s) => stores.add(s));
  });
  for (const [name, agent] of Object.entries(config.agents ?? {})) {
    const fieldProblems = agentProblems(name, agent);
    if (fieldProblems.length) {
      problems.push(...fieldProblems);
      continue;
    }
    if (!clients.has(agent.client)) {
      problems.push(
        `agents.${name}.client: no loaded plugin provides client "${agent.client}"; loaded clients: ${[...clients].join(', ') || 'none'}. Add the plugin that provides it to config.plugins.`,
      );
    }
    if (agent.messageStore !== undefined && !stores.has(agent.messageStore)) {
      problems.push(
        `agents.${name}.messageStore: no loaded plugin provides store "${agent.messageStore}"; available stores: ${[...stores].join(', ')}.`,
      );
    }
  }
  if (problems.length) throw new ConfigurationError(problems);
}
