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
import { OpenAIAssistantAgent, type OpenAIAssistantPollingOptions } from './openai-assistant-agent.js';
import { type OpenAIAssistantExecutionOptions, parseExecutionOptions } from './openai-assistant-definition.js';

/**
 * Builds OpenAIAssistantAgents for `agents.<name>` entries with `client: 'openai-assistants'`.
 * Extra config keys: `assistantId` (use an existing assistant; otherwise one is created from
 * model/instructions/tools on first use), `executionOptions`, `polling`, `enableCodeInterpreter`,
 * `enableFileSearch`, `vectorStoreIds`. The container's agent-run and function-call middleware
 * contributions apply to these agents as to ChatAgents (chat-client middleware does not: the
 * model calls happen on the service).
 */
export class OpenAIAssistantAgentFactory implements AgentFactory {
  constructor(private readonly client: () => OpenAI) {}

  createAgent(name: string, config: AgentConfig, context: ResolutionContext): AIAgent {
    const assistantId = typeof config.assistantId === 'string' ? config.assistantId : undefined;
    if (!assistantId && !config.model) {
      throw new ConfigurationError(`agents.${name}: an openai-assistants agent needs \`model\` (to create an assistant) or \`assistantId\` (to use one).`);
    }
    let executionOptions: OpenAIAssistantExecutionOptions | undefined;
    try {
      executionOptions = config.executionOptions === undefined ? undefined : parseExecutionOptions(config.executionOptions, `agents.${name}.executionOptions`);
    } catch (error) {
      throw new ConfigurationError((error as Error).message);
    }
    return new OpenAIAssistantAgent({
      client: this.client(),
      name: config.name ?? name,
      definition: {
        id: assistantId,
        model: config.model ?? '',
        name: config.name ?? name,
        description: config.description,
        instructions: config.instructions,
        temperature: config.temperature,
        enableCodeInterpreter: config.enableCodeInterpreter === true,
        enableFileSearch: config.enableFileSearch === true,
        vectorStoreIds: Array.isArray(config.vectorStoreIds) ? config.vectorStoreIds.filter((v): v is string => typeof v === 'string') : undefined,
        executionOptions: {
          ...(config.maxOutputTokens ? { maxCompletionTokens: config.maxOutputTokens } : {}),
          ...executionOptions,
        },
      },
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
}
