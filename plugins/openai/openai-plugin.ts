import { ContainerModule } from 'inversify';
import { AgentFactory, ChatClient, type SkeinPlugin } from 'skein';
import { OPENAI_ASSISTANTS_CLIENT_ID } from './assistants/openai-assistant-agent.js';
import { OpenAIAssistantAgentFactory } from './assistants/openai-assistant-agent-factory.js';
import { OPENAI_CHAT_CLIENT_ID, OpenAIChatClient, type OpenAIChatClientOptions } from './openai-chat-client.js';

export type OpenAIPluginOptions = OpenAIChatClientOptions;

/**
 * The OpenAI plugin: binds the Chat Completions client named `openai-chat`. SDK options
 * (`apiKey`, `baseURL`, `maxRetries`, `timeout`, `organization`, `defaultHeaders`, ...) pass
 * through unchanged. Replace a client in tests with `container.rebind(ChatClient)`.
 */
export function openaiPlugin(options: OpenAIPluginOptions = {}): SkeinPlugin {
  return {
    id: 'openai',
    clients: [OPENAI_CHAT_CLIENT_ID, OPENAI_ASSISTANTS_CLIENT_ID],
    module: new ContainerModule(({ bind }) => {
      bind(OpenAIChatClient)
        .toDynamicValue(() => new OpenAIChatClient(options))
        .inSingletonScope();
      bind<ChatClient>(ChatClient)
        .toDynamicValue((context) => context.get(OpenAIChatClient))
        .whenNamed(OPENAI_CHAT_CLIENT_ID);
      // Assistants agents are not ChatAgents: an AgentFactory builds them, sharing the SDK client.
      bind<AgentFactory>(AgentFactory)
        .toDynamicValue((context) => new OpenAIAssistantAgentFactory(() => context.get(OpenAIChatClient).client))
        .whenNamed(OPENAI_ASSISTANTS_CLIENT_ID);
    }),
  };
}
