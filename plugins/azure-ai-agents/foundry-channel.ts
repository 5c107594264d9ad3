import {
  AgentThread,
  AgentThreadChannel,
  type AgentThreadChannelState,
  type AgentChannel,
  type AIAgent,
  type ChannelProvider,
  type ChannelRestoreContext,
  type ChatMessage,
  type SerializedChannel,
  withAttribution,
  withoutAttribution,
} from 'skein';
import { AzureAIAgent } from './azure-ai-agent.js';
import { toSkeinError } from './azure-ai-agents-errors.js';
import { listEveryPage } from './foundry-paging.js';

export const FOUNDRY_CHANNEL_TYPE = 'foundry-channel';

/**
 * Group-chat channels for Foundry agents: every AzureAIAgent of one project shares one Foundry
 * thread. The project is the plugin's endpoint (the SDK client does not expose it), so agents
 * built by one plugin instance share; `project` names it in the key.
 */
export class FoundryChannelProvider implements ChannelProvider {
  readonly channelTypes = [FOUNDRY_CHANNEL_TYPE];

  constructor(readonly project: string) {}

  supports(agent: AIAgent): boolean {
    return agent instanceof AzureAIAgent;
  }

  channelKey(agent: AIAgent): string {
    return `${(agent as AzureAIAgent).chatClient.providerId}:${this.project}`;
  }

  createChannel(agent: AIAgent): AgentChannel {
    return this.#channel(agent as AzureAIAgent, this.channelKey(agent), { thread: sharedThread(agent as AzureAIAgent) });
  }

  async restoreChannel(serialized: SerializedChannel, agent: AIAgent, context: ChannelRestoreContext): Promise<AgentChannel> {
    return this.#channel(agent as AzureAIAgent, serialized.key, await AgentThreadChannel.readState(serialized, agent, context));
  }

  #channel(agent: AzureAIAgent, key: string, state: AgentThreadChannelState): AgentChannel {
    return new AgentThreadChannel({
      type: FOUNDRY_CHANNEL_TYPE,
      key,
      owner: agent,
      newThread: () => sharedThread(agent),
      // Thread messages have no author field: other participants' words name their author in the text.
      toInput: (messages) => messages.map(withAttribution),
      readHistory: async (thread, signal) => (await readFoundryThread(agent, thread.serviceThreadId, signal)).map(withoutAttribution),
      ...state,
    });
  }
}

/** No agent name in the origin: every Foundry agent of the project runs on it. */
function sharedThread(agent: AzureAIAgent): AgentThread {
  return new AgentThread({ origin: { provider: agent.chatClient.providerId } });
}

/** The thread's user and assistant messages, oldest first, text only. */
async function readFoundryThread(agent: AzureAIAgent, threadId: string | undefined, signal?: AbortSignal): Promise<ChatMessage[]> {
  if (threadId === undefined) return [];
  const out: ChatMessage[] = [];
  try {
    for (const m of await listEveryPage((o) => agent.chatClient.client.messages.list(threadId, { order: 'asc', abortSignal: signal, ...o }))) {
      if (m.role !== 'user' && m.role !== 'assistant') continue;
      const text = m.content.map((c) => (c.type === 'text' ? (c as { text: { value: string } }).text.value : '')).join('');
      out.push({ role: m.role, contents: [{ kind: 'text', text }], messageId: m.id, createdAt: m.createdAt.toISOString() });
    }
  } catch (error) {
    throw toSkeinError(agent.chatClient.providerId, error, signal);
  }
  return out;
}
