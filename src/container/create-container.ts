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
import { type AIToolSet, isToolSet } from '../tools/ai-tool-set.js';
import { AgentFactory } from './agent-factory.js';
import { agentToken, durableAgentToken } from './agent-token.js';
import { type DurableAgent, DurableRunner } from '../durable/durable-runner.js';
import { checkAgentFields } from './agent-config-rules.js';
import { readConfigFileChecked } from './config-file-reader.js';
import { ConfigProblems } from './config-problems.js';
import { AGENT_CONFIG_KEYS, type AgentConfig, type SkeinConfig } from './skein-config.js';
import { SkeinPlugin } from './skein-plugin.js';
import { containerModule, newContainer } from './inversify-runtime.js';
import { isSkeinPlugin, NOT_A_PLUGIN } from './plugin-shape.js';
import { ToolReferenceResolver, parseToolReference } from './tool-reference-resolver.js';

export const IN_MEMORY_STORE_ID = 'in-memory';

/**
 * Builds a container from config: the core bindings, each plugin's module, and one binding per
 * agent under `agentToken(name)`. Config problems are reported together, each root cause once,
 * before anything binds. With `parent`, the child's agents may also use the clients, agent
 * factories and stores any ancestor provides (the child's own win).
 *
 * @example
 * const shared = createContainer({ plugins: [openaiPlugin({ apiKey })], agents: { support: { client: 'openai-chat', model: 'gpt-4.1' } } });
 * const tenant = createContainer({ parent: shared, agents: { support: { client: 'openai-chat', model: 'gpt-4.1-mini' } } });
 * const reply = await tenant.get(agentToken('support')).run('Hello');
 */
export function createContainer(config?: SkeinConfig): Container;
/** From a JSON or YAML config file (plugins by id or module path, `${ENV}` interpolation). */
export function createContainer(configFile: string, options?: { env?: NodeJS.ProcessEnv; parent?: Container }): Promise<Container>;
export function createContainer(
  config: SkeinConfig | string = {},
  options: { env?: NodeJS.ProcessEnv; parent?: Container } = {},
): Container | Promise<Container> {
  if (typeof config === 'string') {
    return readConfigFileChecked(config, options.env).then(({ config: fileConfig, problems }) =>
      buildContainer({ ...fileConfig, parent: options.parent }, problems),
    );
  }
  return buildContainer(config, new ConfigProblems());
}

// The parent of each container built here, so a child can look up its whole chain of ancestors.
const parents = new WeakMap<Container, Container>();

function buildContainer(config: SkeinConfig, problems: ConfigProblems): Container {
  validateConfig(config, problems);
  const container = newContainer(config.parent ? { parent: config.parent } : undefined);
  if (config.parent) parents.set(container, config.parent);
  container.load(coreModule(config));
  for (const plugin of config.plugins ?? []) {
    container.bind(SkeinPlugin).toConstantValue(plugin);
    container.load(plugin.module);
  }
  if (config.parent) forwardFromParent(container, config);
  for (const [name, agentConfig] of Object.entries(config.agents ?? {})) {
    container
      .bind(agentToken(name))
      .toDynamicValue((context) => createAgent(name, agentConfig, context))
      .inSingletonScope();
    const durability = agentConfig.durability;
    if (durability) container.bind(durableAgentToken(name)).toDynamicValue((context) => durableFace(name, durability, context)).inSingletonScope();
  }
  return container;
}

/** The durable face of agent `name`, from the runner its engine's plugin binds. */
function durableFace(name: string, durability: NonNullable<AgentConfig['durability']>, context: ResolutionContext): DurableAgent {
  const agent = context.get(agentToken(name));
  if (!(agent instanceof ChatAgent)) throw new ConfigurationError(`agents.${name}.durability: durable runs need a ChatAgent; agent "${name}" is a ${agent.constructor.name}.`);
  const { engine, ...options } = durability;
  return context.get<DurableRunner>(DurableRunner, { name: engine }).durable(agent, options);
}

/** The parent and its ancestors, nearest first. */
function ancestors(parent: Container): Container[] {
  const chain: Container[] = [];
  for (let c: Container | undefined = parent; c && !chain.includes(c); c = parents.get(c)) chain.push(c);
  return chain;
}

/** The nearest ancestor that binds `token` under `name` (without building it). */
function ownerInParents(parent: Container, token: symbol, name: string): Container | undefined {
  return ancestors(parent).find((c) => c.isBound(token, { name }));
}

/**
 * Binds in the child, under their names, the clients, agent factories, thread factories and stores
 * its agents name but only an ancestor provides. inversify looks in the parent only for a service
 * the child has no binding for at all, and the child always binds default stores and thread
 * factories (and maybe clients of its own), so a named lookup would otherwise stop at the child.
 */
function forwardFromParent(container: Container, config: SkeinConfig): void {
  const parent = config.parent!;
  const own = { clients: new Set((config.plugins ?? []).flatMap((p) => p.clients ?? [])), stores: new Set((config.plugins ?? []).flatMap((p) => p.stores ?? [])) };
  const forward = (token: symbol, name: string) => {
    if (container.isCurrentBound(token, { name })) return;
    const owner = ownerInParents(parent, token, name);
    if (owner) container.bind(token).toDynamicValue(() => owner.get(token, { name })).whenNamed(name);
  };
  const agents = Object.values(config.agents ?? {});
  for (const client of new Set(agents.map((a) => a.client))) {
    if (own.clients.has(client)) continue;
    for (const token of [ChatClient, AgentFactory, ThreadFactory]) forward(token, client);
  }
  for (const store of new Set(agents.map((a) => a.messageStore))) {
    if (store !== undefined && store !== IN_MEMORY_STORE_ID && !own.stores.has(store)) forward(ChatMessageStoreFactory, store);
  }
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

/** The reducer an agent's `history` config asks for (summarize wins, then a token budget, then a count). */
function historyReducer(history: AgentConfig['history']): ChatReducer | undefined {
  if (history?.summarize !== undefined) return new SummarizingReducer(history.summarize);
  if (history?.maxTokens !== undefined) return new TokenBudgetReducer({ maxTokens: history.maxTokens });
  if (history?.maxMessages !== undefined) return new MessageCountReducer(history.maxMessages);
  return undefined;
}

/** Client and store ids a parent container provides: its plugins' (and its ancestors'), or bound by hand. */
function providedByParent(parent: Container | undefined): { clients: string[]; stores: string[]; hasClient(id: string): boolean; hasStore(id: string): boolean } {
  if (!parent) return { clients: [], stores: [], hasClient: () => false, hasStore: () => false };
  const plugins = parent.getAll<SkeinPlugin>(SkeinPlugin, { optional: true });
  return {
    clients: plugins.flatMap((p) => p.clients ?? []),
    stores: plugins.flatMap((p) => p.stores ?? []),
    hasClient: (id) => !!ownerInParents(parent, ChatClient, id) || !!ownerInParents(parent, AgentFactory, id),
    hasStore: (id) => !!ownerInParents(parent, ChatMessageStoreFactory, id),
  };
}

/** Problems with the `<prefix>:<rest>` entries of an agent's tools (plain names are resolved at creation). */
function addToolReferenceProblems(
  agentName: string,
  tools: readonly string[] | undefined,
  owners: ReadonlyMap<string, NonNullable<SkeinPlugin['toolReferences']>>,
  problems: ConfigProblems,
): void {
  (tools ?? []).forEach((entry, i) => {
    const reference = parseToolReference(entry);
    if (!reference) return;
    const owner = owners.get(reference.prefix);
    // A plugin that failed to load may be the one resolving this prefix: its own problem is the news.
    if (!owner && problems.mayHaveProvided('toolPrefixes', reference.prefix)) return;
    const problem = owner
      ? owner.check(entry)
      : `no loaded plugin resolves "${reference.prefix}:" tool references; loaded prefixes: ${[...owners.keys()].join(', ') || 'none'}. Add the plugin (e.g. plugins: { mcp: { servers: ... } }).`;
    if (problem) problems.add(`agents.${agentName}.tools[${i}]`, problem);
  });
}

function validateConfig(config: SkeinConfig, problems: ConfigProblems): void {
  const plugins = config.plugins ?? [];
  const clients = new Set<string>();
  const stores = new Set<string>([IN_MEMORY_STORE_ID]);
  const seen = new Set<string>();
  const toolReferences = new Map<string, NonNullable<SkeinPlugin['toolReferences']>>();
  const optionCheckers = new Map<string, SkeinPlugin>();
  const engines = new Set<string>();
  plugins.forEach((plugin, i) => {
    if (!isSkeinPlugin(plugin)) {
      problems.add(`plugins[${i}]`, NOT_A_PLUGIN);
      problems.pluginFailed({ id: String(i) });
      return;
    }
    if (seen.has(plugin.id)) problems.add(`plugins[${i}]`, `plugin "${plugin.id}" is loaded twice.`);
    seen.add(plugin.id);
    plugin.clients?.forEach((c) => clients.add(c));
    plugin.stores?.forEach((s) => stores.add(s));
    plugin.durableEngines?.forEach((e) => engines.add(e));
    if (plugin.toolReferences) toolReferences.set(plugin.toolReferences.prefix, plugin.toolReferences);
    if (plugin.checkAgentOptions) plugin.clients?.forEach((c) => optionCheckers.set(c, plugin));
  });
  const parent = providedByParent(config.parent);
  for (const [name, agent] of Object.entries(config.agents ?? {})) {
    if (!checkAgentFields(name, agent, problems)) continue;
    // An agent naming what a plugin that failed would provide has no problem of its own.
    if (!clients.has(agent.client) && !parent.hasClient(agent.client) && !problems.mayHaveProvided('clients', agent.client)) {
      const loaded = [...new Set([...clients, ...parent.clients])].join(', ') || 'none';
      problems.add(
        `agents.${name}.client`,
        `no loaded plugin${config.parent ? ' (here or in the parent container)' : ''} provides client "${agent.client}"; loaded clients: ${loaded}. Add the plugin that provides it to config.plugins.`,
      );
    }
    if (agent.messageStore !== undefined && !stores.has(agent.messageStore) && !parent.hasStore(agent.messageStore) && !problems.mayHaveProvided('stores', agent.messageStore)) {
      problems.add(
        `agents.${name}.messageStore`,
        `no loaded plugin${config.parent ? ' (here or in the parent container)' : ''} provides store "${agent.messageStore}"; available stores: ${[...new Set([...stores, ...parent.stores])].join(', ')}.`,
      );
    }
    addToolReferenceProblems(name, agent.tools, toolReferences, problems);
    const engine = agent.durability?.engine;
    if (agent.durability !== undefined && (typeof engine !== 'string' || !engines.has(engine))) {
      problems.add(
        `agents.${name}.durability.engine`,
        `expected a durable engine a loaded plugin provides (${[...engines].join(', ') || 'none loaded'}), found ${JSON.stringify(engine)}. Add the engine's plugin, e.g. dbosPlugin({ systemDatabaseUrl }) from skein/dbos.`,
      );
    }
    const options = providerOptions(agent);
    if (options) for (const { key, problem } of optionCheckers.get(agent.client)?.checkAgentOptions?.(agent.client, options) ?? []) problems.add(`agents.${name}.${key}`, problem);
  }
  if (problems.length) throw new ConfigurationError(problems.messages);
}
