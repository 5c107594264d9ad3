import {
  type AgentThread,
  AgentThreadChannelProviderBase,
  type AgentThreadChannelOptions,
  type AIAgent,
  authorsInText,
  type ChatMessage,
  sharedServiceThread,
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
export class FoundryChannelProvider extends AgentThreadChannelProviderBase<AzureAIAgent> {
  constructor(readonly project: string) {
    super(FOUNDRY_CHANNEL_TYPE, AzureAIAgent);
  }

  channelKey(agent: AIAgent): string {
    return `${(agent as AzureAIAgent).chatClient.providerId}:${this.project}`;
  }

  /** No agent name in the origin: every Foundry agent of the project runs on it. */
  protected override newThread(agent: AzureAIAgent): AgentThread {
    return sharedServiceThread(agent.chatClient.providerId);
  }

  // Thread messages have no author field: other participants' words name their author in the text.
  protected override channelOptions(agent: AzureAIAgent): Pick<AgentThreadChannelOptions, 'readHistory' | 'toInput'> {
    return authorsInText((thread, signal) => readFoundryThread(agent, thread.serviceThreadId, signal));
  }
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
