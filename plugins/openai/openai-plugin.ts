import { AgentFactory, ChannelProvider, ChatClient, containerModule, type SkeinPlugin } from 'skein';
import { OPENAI_ASSISTANTS_CLIENT_ID } from './assistants/openai-assistant-agent.js';
import { OpenAIAssistantAgentFactory } from './assistants/openai-assistant-agent-factory.js';
import { OpenAIAssistantChannelProvider } from './assistants/openai-assistant-channel.js';
import { hostedMcpOptionProblems } from './hosted-mcp.js';
import { OPENAI_CHAT_CLIENT_ID, OpenAIChatClient, type OpenAIChatClientOptions } from './openai-chat-client.js';
import { OPENAI_RESPONSES_CLIENT_ID, OpenAIResponsesClient } from './openai-responses-client.js';
import { OpenAIResponsesChannelProvider } from './responses-channel.js';

export interface OpenAIPluginOptions extends OpenAIChatClientOptions {
  /** Default `store` of the `openai-responses` client (agents override it with `store`). */
  store?: boolean;
  /** Default `conversation` of the `openai-responses` client (agents override it). */
  conversation?: boolean;
}

/**
 * The OpenAI plugin: binds the Chat Completions client named `openai-chat` and the Responses
 * client named `openai-responses`. SDK options (`apiKey`, `baseURL`, `maxRetries`, `timeout`,
 * `organization`, `defaultHeaders`, ...) pass through unchanged. Replace a client in tests with
 * `container.rebind(ChatClient)`.
 */
export function openaiPlugin(options: OpenAIPluginOptions = {}): SkeinPlugin {
  return createOpenAIPlugin(options);
}

/** Settings a config file may give the plugin (checked before anything is built). */
openaiPlugin.configSchema = async () => {
  const { z } = await import('zod');
  return z
  .object({
    apiKey: z.string().min(1).optional(),
    baseURL: z.string().url().optional(),
    organization: z.string().optional(),
    project: z.string().optional(),
    model: z.string().optional(),
    maxRetries: z.number().int().nonnegative().optional(),
    timeout: z.number().positive().optional(),
    defaultHeaders: z.record(z.string(), z.string()).optional(),
  })
  .passthrough();
};

function createOpenAIPlugin(options: OpenAIPluginOptions): SkeinPlugin {
  const { store, conversation, ...shared } = options;
  return {
    id: 'openai',
    clients: [OPENAI_CHAT_CLIENT_ID, OPENAI_RESPONSES_CLIENT_ID, OPENAI_ASSISTANTS_CLIENT_ID],
    checkAgentOptions: hostedMcpOptionProblems,
    module: containerModule(({ bind }) => {
      bind(OpenAIChatClient)
        .toDynamicValue(() => new OpenAIChatClient(shared))
        .inSingletonScope();
      bind<ChatClient>(ChatClient)
        .toDynamicValue((context) => context.get(OpenAIChatClient))
        .whenNamed(OPENAI_CHAT_CLIENT_ID);
      // Assistants agents are not ChatAgents: an AgentFactory builds them, sharing the SDK client.
      bind<AgentFactory>(AgentFactory)
        .toDynamicValue((context) => new OpenAIAssistantAgentFactory(() => context.get(OpenAIChatClient).client))
        .whenNamed(OPENAI_ASSISTANTS_CLIENT_ID);
      bind(OpenAIResponsesClient)
        .toDynamicValue(() => new OpenAIResponsesClient({ ...shared, store, conversation }))
        .inSingletonScope();
      bind<ChatClient>(ChatClient)
        .toDynamicValue((context) => context.get(OpenAIResponsesClient))
        .whenNamed(OPENAI_RESPONSES_CLIENT_ID);
      // Group-chat channels (Chat Completions agents use the core's message-store channel).
      bind<ChannelProvider>(ChannelProvider).toConstantValue(new OpenAIResponsesChannelProvider());
      bind<ChannelProvider>(ChannelProvider).toConstantValue(new OpenAIAssistantChannelProvider());
    }),
  };
}
