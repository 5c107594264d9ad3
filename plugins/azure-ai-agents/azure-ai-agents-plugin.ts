import type { AgentsClientOptionalParams } from '@azure/ai-agents';
import type { TokenCredential } from '@azure/core-auth';
import { AgentsClient } from './azure-peers.js';
import type { ResolutionContext } from 'inversify';
import {
  AGENT_CONFIG_KEYS,
  AgentFactory,
  type AgentConfig,
  AgentRunMiddleware,
  ChatClientMiddleware,
  FunctionCallMiddleware,
  type AIAgent,
  ChannelProvider,
  ChatClient,
  ConfigurationError,
  containerModule,
  DefaultThreadFactory,
  resolveTools,
  SerializationRegistry,
  type SkeinPlugin,
  ThreadFactory,
} from 'skein';
import { AzureAIAgent, type AzureAIAgentOptions } from './azure-ai-agent.js';
import { FoundryChannelProvider } from './foundry-channel.js';
import { type ActiveRunPolicy, AZURE_AI_AGENTS_CLIENT_ID, AzureAIAgentsChatClient, FOUNDRY_RUN_OPTIONS } from './azure-ai-agents-chat-client.js';

export const AZURE_AI_AGENTS_PLUGIN_ID = 'azure-ai-agents';

/** The plugin's shared `AgentsClient`; rebind it in tests to point somewhere else. */
export const FoundryAgentsClient = Symbol('FoundryAgentsClient');

export interface AzureAIAgentsPluginOptions {
  /** The Foundry project endpoint, e.g. `https://<resource>.services.ai.azure.com/api/projects/<project>`. */
  endpoint?: string;
  /** Any `@azure/core-auth` TokenCredential; `new DefaultAzureCredential()` from `@azure/identity` in real use. */
  credential?: TokenCredential;
  /** SDK options (`retryOptions`, `httpClient`, `apiVersion`, ...), passed through unchanged. */
  clientOptions?: AgentsClientOptionalParams;
  /** Use this SDK client instead of building one from endpoint and credential. */
  client?: AgentsClient;
  /** Defaults for every agent (each agent config may set its own). */
  pollIntervalMs?: number;
  runTimeoutMs?: number;
  activeRun?: ActiveRunPolicy;
}

/**
 * Foundry Agents through `@azure/ai-agents`. Agents whose config names client `azure-ai-agents`
 * become `AzureAIAgent`s: `agentId: 'asst_...'` binds an existing Foundry agent, otherwise one is
 * created on first use from `model`, `instructions`, `name`, `description` and the agent's tools.
 * The named `ChatClient` binding serves plain ChatAgents that pass `agentId` per call.
 */
export function azureAIAgentsPlugin(options: AzureAIAgentsPluginOptions): SkeinPlugin {
  if (!options?.client && (!options?.endpoint || !options.credential)) {
    throw new ConfigurationError('azureAIAgentsPlugin needs `endpoint` and `credential` (e.g. new DefaultAzureCredential()), or a ready `client`.');
  }
  return {
    id: AZURE_AI_AGENTS_PLUGIN_ID,
    clients: [AZURE_AI_AGENTS_CLIENT_ID],
    module: containerModule(({ bind }) => {
      bind<AgentsClient>(FoundryAgentsClient)
        .toDynamicValue(() => options.client ?? new AgentsClient(options.endpoint!, options.credential!, options.clientOptions))
        .inSingletonScope();
      bind(AzureAIAgentsChatClient)
        .toDynamicValue((context) => new AzureAIAgentsChatClient({ ...defaults(options), client: context.get<AgentsClient>(FoundryAgentsClient) }))
        .inSingletonScope();
      bind<ChatClient>(ChatClient)
        .toDynamicValue((context) => context.get(AzureAIAgentsChatClient))
        .whenNamed(AZURE_AI_AGENTS_CLIENT_ID);
      bind<ThreadFactory>(ThreadFactory)
        .toDynamicValue((context) => context.get(DefaultThreadFactory))
        .whenNamed(AZURE_AI_AGENTS_CLIENT_ID);
      bind<AgentFactory>(AgentFactory)
        .toConstantValue({ createAgent: (name, config, context) => createAzureAIAgent(name, config, context, options) })
        .whenNamed(AZURE_AI_AGENTS_CLIENT_ID);
      bind<ChannelProvider>(ChannelProvider).toConstantValue(new FoundryChannelProvider(options.endpoint ?? 'configured-client'));
    }),
  };
}

function defaults(options: AzureAIAgentsPluginOptions) {
  return { pollIntervalMs: options.pollIntervalMs, runTimeoutMs: options.runTimeoutMs, activeRun: options.activeRun };
}

function createAzureAIAgent(name: string, config: AgentConfig, context: ResolutionContext, options: AzureAIAgentsPluginOptions): AIAgent {
  checkFoundryKeys(name, config);
  const agentId = optional(config, 'agentId', 'string', name);
  if (agentId === undefined && config.model === undefined) {
    throw new ConfigurationError(`agents.${name}: a Foundry agent needs \`agentId\` (an existing agent) or \`model\` (to create one).`);
  }
  return new AzureAIAgent({
    client: context.get<AgentsClient>(FoundryAgentsClient),
    agentId,
    model: config.model,
    name: config.name ?? name,
    description: config.description,
    instructions: config.instructions,
    tools: resolveTools(name, config, context),
    foundryTools: config.foundryTools as AzureAIAgentOptions['foundryTools'],
    chatOptions: { temperature: config.temperature, maxOutputTokens: config.maxOutputTokens, additionalProperties: runOptionsOf(config) },
    pollIntervalMs: optional(config, 'pollIntervalMs', 'number', name) ?? options.pollIntervalMs,
    runTimeoutMs: optional(config, 'runTimeoutMs', 'number', name) ?? options.runTimeoutMs,
    activeRun: (optional(config, 'activeRun', 'string', name) as ActiveRunPolicy | undefined) ?? options.activeRun,
    threadFactory: context.get<ThreadFactory>(ThreadFactory, { name: AZURE_AI_AGENTS_CLIENT_ID }),
    serializationRegistry: context.get<SerializationRegistry>(SerializationRegistry),
    maxToolIterations: config.maxToolIterations,
    concurrency: config.concurrency,
    // The container's middleware (e.g. telemetryPlugin's spans) applies as to any ChatAgent it builds.
    middleware: {
      agentRun: context.getAll<AgentRunMiddleware>(AgentRunMiddleware, { optional: true }),
      functionCall: context.getAll<FunctionCallMiddleware>(FunctionCallMiddleware, { optional: true }),
      chatClient: context.getAll<ChatClientMiddleware>(ChatClientMiddleware, { optional: true }),
    },
  });
}

function optional<T extends 'string' | 'number'>(config: AgentConfig, key: string, type: T, agent: string): (T extends 'string' ? string : number) | undefined {
  const value = config[key];
  if (value === undefined) return undefined;
  if (typeof value !== type) throw new ConfigurationError(`agents.${agent}.${key}: expected a ${type}, found ${JSON.stringify(value)}.`);
  return value as T extends 'string' ? string : number;
}

/** Agent config keys this plugin reads itself, beside the core's. */
const FOUNDRY_AGENT_KEYS = new Set(['agentId', 'pollIntervalMs', 'runTimeoutMs', 'activeRun', 'foundryTools']);

/** Core keys that mean nothing for an agent whose history Foundry keeps: saying so beats ignoring them. */
const NOT_FOR_FOUNDRY: Record<string, string> = {
  messageStore: 'Foundry keeps the history in its own threads; remove `messageStore`',
  history: 'Foundry decides what of its thread the model reads; use `truncationStrategy` (e.g. { type: "last_messages", lastMessages: 10 }) or `maxPromptTokens` instead',
  keepPartial: 'a Foundry run keeps or drops its own partial answer; remove `keepPartial`',
};

const RUN_OPTION_TYPES: Record<(typeof FOUNDRY_RUN_OPTIONS)[number], (value: unknown) => boolean> = {
  topP: (v) => typeof v === 'number' && v >= 0 && v <= 1,
  maxPromptTokens: (v) => Number.isInteger(v) && (v as number) > 0,
  truncationStrategy: (v) => isRecord(v) && (v.type === 'auto' || v.type === 'last_messages'),
  responseFormat: (v) => typeof v === 'string' || isRecord(v),
  parallelToolCalls: (v) => typeof v === 'boolean',
  metadata: (v) => isRecord(v) && Object.values(v).every((m) => typeof m === 'string'),
};

const RUN_OPTION_EXPECTED: Record<(typeof FOUNDRY_RUN_OPTIONS)[number], string> = {
  topP: 'a number from 0 to 1',
  maxPromptTokens: 'a positive integer',
  truncationStrategy: '{ type: "auto" } or { type: "last_messages", lastMessages: N }',
  responseFormat: '"auto", "none" or a response format object',
  parallelToolCalls: 'a boolean',
  metadata: 'an object of string values',
};

/**
 * Every key of a Foundry agent's config is used or reported: core keys, this plugin's own, and
 * the Foundry run parameters (sent with each run). Anything else is a typo or a setting Foundry
 * does not have, and is reported with the keys that are accepted, all problems at once.
 */
function checkFoundryKeys(name: string, config: AgentConfig): void {
  const problems: string[] = [];
  const runOptions = new Set<string>(FOUNDRY_RUN_OPTIONS);
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined) continue;
    if (key in NOT_FOR_FOUNDRY) problems.push(`agents.${name}.${key}: not used by a Foundry agent: ${NOT_FOR_FOUNDRY[key]}.`);
    else if (runOptions.has(key)) {
      const k = key as (typeof FOUNDRY_RUN_OPTIONS)[number];
      if (!RUN_OPTION_TYPES[k](value)) problems.push(`agents.${name}.${key}: expected ${RUN_OPTION_EXPECTED[k]}, found ${JSON.stringify(value)}.`);
    } else if (key === 'foundryTools') {
      if (!Array.isArray(value) || !value.every((t) => isRecord(t) && typeof t.type === 'string')) {
        problems.push(`agents.${name}.foundryTools: expected an array of Foundry tool definitions like { type: "code_interpreter" }, found ${JSON.stringify(value)}.`);
      }
    } else if (!AGENT_CONFIG_KEYS.has(key) && !FOUNDRY_AGENT_KEYS.has(key)) {
      problems.push(
        `agents.${name}.${key}: not a Foundry agent setting. Expected one of the common keys, ${[...FOUNDRY_AGENT_KEYS].join(', ')}, ` +
          `or a Foundry run parameter (${FOUNDRY_RUN_OPTIONS.join(', ')}); remove it or fix its spelling.`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigurationError(problems);
}

/** The Foundry run parameters of a config, passed to each run as provider options. */
function runOptionsOf(config: AgentConfig): Record<string, unknown> | undefined {
  const entries = FOUNDRY_RUN_OPTIONS.filter((key) => config[key] !== undefined).map((key) => [key, config[key]] as const);
  return entries.length ? Object.fromEntries(entries) : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
