import type { AgentsClientOptionalParams } from '@azure/ai-agents';
import type { TokenCredential } from '@azure/core-auth';
import { AgentsClient } from './azure-peers.js';
import type { ResolutionContext } from 'inversify';
import {
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
import { AzureAIAgent } from './azure-ai-agent.js';
import { FoundryChannelProvider } from './foundry-channel.js';
import { type ActiveRunPolicy, AZURE_AI_AGENTS_CLIENT_ID, AzureAIAgentsChatClient } from './azure-ai-agents-chat-client.js';

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
    chatOptions: { temperature: config.temperature, maxOutputTokens: config.maxOutputTokens },
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
