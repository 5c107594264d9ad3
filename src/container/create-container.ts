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
import { AITool } from '../tools/ai-tool.js';
import { type AIToolSet, isToolSet } from '../tools/ai-tool-set.js';
import { AgentFactory } from './agent-factory.js';
import { agentToken } from './agent-token.js';
import { readConfigFile } from './config-file.js';
import { AGENT_CONFIG_KEYS, type AgentConfig, type SkeinConfig } from './skein-config.js';
import { SkeinPlugin } from './skein-plugin.js';
import { ToolReferenceResolver, parseToolReference } from './tool-reference-resolver.js';
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
    tools: resolveToolsAndSets(name, config, context),
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

/** The agent's tools for agents that take only fixed tools; a tool set (e.g. `mcp:files`) is a ConfigurationError. */
export function resolveTools(agentName: string, config: AgentConfig, context: ResolutionContext): AITool[] {
  return resolveToolsAndSets(agentName, config, context).map((t) => {
    if (!isToolSet(t)) return t;
    throw new ConfigurationError(
      `agents.${agentName}.tools: "${t.name}" is a tool set listed at run time, which client "${config.client}" does not support; use a ChatAgent client (e.g. openai-chat, openai-responses) or name its tools one by one.`,
    );
  });
}

/** The agent's tools: named tools bound under AITool and `<prefix>:<rest>` references a plugin resolves. */
export function resolveToolsAndSets(agentName: string, config: AgentConfig, context: ResolutionContext): (AITool | AIToolSet)[] {
  if (!config.tools?.length) return [];
  const available = new Map(context.getAll<AITool>(AITool, { optional: true }).map((t) => [t.declaration.name, t]));
  return config.tools.map((toolName) => {
    const reference = parseToolReference(toolName);
    if (reference) return resolveToolReference(agentName, toolName, reference.prefix, context);
    const found = available.get(toolName);
    if (!found) {
      throw new ConfigurationError(
        `agents.${agentName}.tools: no tool named "${toolName}" is bound; available: ${[...available.keys()].join(', ') || 'none'}. Add it to config.tools or bind it under AITool.`,
      );
    }
    return found;
  });
}

/** `<prefix>:<rest>` (e.g. `mcp:files`): the plugin that owns the prefix resolves it. */
function resolveToolReference(agentName: string, reference: string, prefix: string, context: ResolutionContext): AITool | AIToolSet {
  const resolvers = context.getAll<ToolReferenceResolver>(ToolReferenceResolver, { optional: true });
  const resolver = resolvers.find((r) => r.prefix === prefix);
  if (!resolver) {
    throw new ConfigurationError(
      `agents.${agentName}.tools: no loaded plugin resolves "${prefix}:" references (found "${reference}"); loaded prefixes: ${resolvers.map((r) => r.prefix).join(', ') || 'none'}.`,
    );
  }
  return resolver.resolve(reference);
}

/** Config keys the core does not know are provider options (e.g. `store: false` for Responses). */
export function providerOptions(config: AgentConfig): Record<string, unknown> | undefined {
  const extras = Object.entries(config).filter(([key]) => !AGENT_CONFIG_KEYS.has(key));
  return extras.length ? Object.fromEntries(extras) : undefined;
}

function isHistoryLimit(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return entries.length > 0 && entries.every(([k, v]) => (k === 'maxMessages' || k === 'maxTokens') && Number.isInteger(v) && (v as number) > 0);
}

/** The reducer an agent's `history` config asks for (a token budget wins when both are given). */
function historyReducer(history: AgentConfig['history']): ChatReducer | undefined {
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
  history: [isHistoryLimit, 'an object with a positive integer maxMessages and/or maxTokens'],
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

/** Problems with the `<prefix>:<rest>` entries of an agent's tools (plain names are resolved at creation). */
function toolReferenceProblems(agentName: string, tools: readonly string[] | undefined, owners: ReadonlyMap<string, NonNullable<SkeinPlugin['toolReferences']>>): string[] {
  const problems: string[] = [];
  (tools ?? []).forEach((entry, i) => {
    const reference = parseToolReference(entry);
    if (!reference) return;
    const owner = owners.get(reference.prefix);
    const problem = owner
      ? owner.check(entry)
      : `no loaded plugin resolves "${reference.prefix}:" tool references; loaded prefixes: ${[...owners.keys()].join(', ') || 'none'}. Add the plugin (e.g. plugins: { mcp: { servers: ... } }).`;
    if (problem) problems.push(`agents.${agentName}.tools[${i}]: ${problem}`);
  });
  return problems;
}

function validateConfig(config: SkeinConfig, earlierProblems: readonly string[]): void {
  const problems: string[] = [...earlierProblems];
  const plugins = config.plugins ?? [];
  const clients = new Set<string>();
  const stores = new Set<string>([IN_MEMORY_STORE_ID]);
  const seen = new Set<string>();
  const toolReferences = new Map<string, NonNullable<SkeinPlugin['toolReferences']>>();
  plugins.forEach((plugin, i) => {
    if (!plugin || typeof plugin.id !== 'string' || !(plugin.module instanceof inversify().ContainerModule)) {
      problems.push(`plugins[${i}]: expected a SkeinPlugin ({ id, module: ContainerModule }), e.g. openaiPlugin({ apiKey }).`);
      return;
    }
    if (seen.has(plugin.id)) problems.push(`plugins[${i}]: plugin "${plugin.id}" is loaded twice.`);
    seen.add(plugin.id);
    plugin.clients?.forEach((c) => clients.add(c));
    plugin.stores?.forEach((s) => stores.add(s));
    if (plugin.toolReferences) toolReferences.set(plugin.toolReferences.prefix, plugin.toolReferences);
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
    problems.push(...toolReferenceProblems(name, agent.tools, toolReferences));
  }
  if (problems.length) throw new ConfigurationError(problems);
}
