import {
  AgentThread,
  AgentThreadChannel,
  type AgentThreadChannelState,
  type AgentChannel,
  type AIAgent,
  type ChannelProvider,
  type ChannelRestoreContext,
  type ChatMessage,
  messageText,
  type SerializedChannel,
  textMessage,
} from 'skein';
import { A2AAgent } from './a2a-agent.js';
import { A2A_PROVIDER_ID } from './a2a-errors.js';

export const A2A_CHANNEL_TYPE = 'a2a-channel';

/**
 * Group-chat channels for A2A agents: one per remote agent (its card URL), continuing one A2A
 * context. A2A cannot list a context's messages, so the channel keeps a transcript of what it
 * sent and received.
 */
export class A2AChannelProvider implements ChannelProvider {
  readonly channelTypes = [A2A_CHANNEL_TYPE];

  supports(agent: AIAgent): boolean {
    return agent instanceof A2AAgent;
  }

  channelKey(agent: AIAgent): string {
    return `${A2A_PROVIDER_ID}:${(agent as A2AAgent).url}`;
  }

  createChannel(agent: AIAgent): AgentChannel {
    return this.#channel(agent, this.channelKey(agent), { thread: sharedThread() });
  }

  async restoreChannel(serialized: SerializedChannel, agent: AIAgent, context: ChannelRestoreContext): Promise<AgentChannel> {
    return this.#channel(agent, serialized.key, await AgentThreadChannel.readState(serialized, agent, context));
  }

  #channel(agent: AIAgent, key: string, state: AgentThreadChannelState): AgentChannel {
    return new AgentThreadChannel({ type: A2A_CHANNEL_TYPE, key, owner: agent, newThread: sharedThread, toInput: asOneMessage, ...state });
  }
}

/**
 * An A2A turn is one message, so what several participants said since the remote's last turn
 * goes as one message, a line per speaker: the remote can tell who said what.
 */
export function asOneMessage(messages: ChatMessage[]): ChatMessage[] {
  if (messages.length <= 1) return messages;
  const lines = messages.map((m) => `${m.authorName ?? m.role}: ${messageText(m)}`);
  return [textMessage('user', lines.join('\n'))];
}

/** No agent name in the origin: two A2AAgent objects for one remote continue the same context. */
function sharedThread(): AgentThread {
  return new AgentThread({ origin: { provider: A2A_PROVIDER_ID } });
}
