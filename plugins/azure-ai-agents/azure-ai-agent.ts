import type { AgentsClient, ToolDefinitionUnion } from '@azure/ai-agents';
import { ChatAgent, type ChatAgentOptions, ThreadCompatibilityError, type AgentThread } from 'skein';
import {
  type ActiveRunPolicy,
  AzureAIAgentsChatClient,
  type FoundryAgentDefinition,
} from './azure-ai-agents-chat-client.js';

export interface AzureAIAgentOptions extends Omit<ChatAgentOptions, 'chatClient' | 'chatMessageStoreFactory'> {
  /** The SDK client: `new AgentsClient(endpoint, new DefaultAzureCredential())`. */
  client: AgentsClient;
  /** Run this existing Foundry agent... */
  agentId?: string;
  /** ...or create one on first use with this model (plus `instructions`, `name`, `description`, `tools`). */
  model?: string;
  /** Service-side tools of a created agent (code interpreter, file search, ...). */
  foundryTools?: ToolDefinitionUnion[];
  pollIntervalMs?: number;
  runTimeoutMs?: number;
  activeRun?: ActiveRunPolicy;
}

/**
 * A Skein agent on a Foundry agent: the conversation lives in a Foundry thread, Skein's function
 * tools run locally through the usual tool loop and their outputs go back to the waiting run.
 * Bound to an existing Foundry agent (`agentId`) or created from a definition (`model`, ...).
 */
export class AzureAIAgent extends ChatAgent {
  declare readonly chatClient: AzureAIAgentsChatClient;

  constructor(options: AzureAIAgentOptions | (Omit<ChatAgentOptions, 'chatClient'> & { chatClient: AzureAIAgentsChatClient })) {
    super({ ...options, chatClient: 'chatClient' in options ? options.chatClient : AzureAIAgent.#clientFor(options) });
  }

  static #clientFor(options: AzureAIAgentOptions): AzureAIAgentsChatClient {
    if (options.agentId === undefined && options.model === undefined) {
      throw new TypeError('AzureAIAgent needs `agentId` (an existing Foundry agent) or `model` (to create one).');
    }
    const definition: FoundryAgentDefinition | undefined =
      options.agentId === undefined
        ? { model: options.model!, name: options.name, description: options.description, instructions: options.instructions, tools: options.foundryTools }
        : undefined;
    return new AzureAIAgentsChatClient({
      client: options.client,
      agentId: options.agentId,
      definition,
      pollIntervalMs: options.pollIntervalMs,
      runTimeoutMs: options.runTimeoutMs,
      activeRun: options.activeRun,
    });
  }

  /** The Foundry agent's id (creates the agent from its definition on first call). */
  getFoundryAgentId(): Promise<string> {
    return this.chatClient.getAgentId({ instructions: this.instructions, tools: this.tools.map((t) => t.declaration) });
  }

  /** Deletes the Foundry agent definition. Separate from `deleteThread`; threads are left alone. */
  deleteAgentDefinition(options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.chatClient.deleteAgent(options);
  }

  /** The Foundry thread id of a thread this agent ran, if it has run. */
  foundryThreadId(thread: AgentThread): string | undefined {
    this.assertCompatible(thread);
    return thread.serviceThreadId;
  }

  override assertCompatible(thread: AgentThread): void {
    if (thread.origin.provider !== this.chatClient.providerId) {
      throw new ThreadCompatibilityError(
        `Expected a Foundry Agents thread (provider "${this.chatClient.providerId}"), found a thread made by ${thread.origin.provider}` +
          `${thread.origin.agent ? ` (agent "${thread.origin.agent}")` : ''}. Foundry threads and OpenAI threads are not interchangeable; ` +
          `continue it with an agent of ${thread.origin.provider}, or start a new thread with agent.getNewThread().`,
      );
    }
    super.assertCompatible(thread);
  }
}
