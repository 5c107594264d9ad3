import {
  type AgentThread,
  AgentThreadChannelProviderBase,
  type AgentThreadChannelOptions,
  type AIAgent,
  type ChatMessage,
  messageText,
  sharedServiceThread,
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
export class A2AChannelProvider extends AgentThreadChannelProviderBase {
  constructor() {
    super(A2A_CHANNEL_TYPE, A2AAgent);
  }

  channelKey(agent: AIAgent): string {
    return `${A2A_PROVIDER_ID}:${(agent as A2AAgent).url}`;
  }

  /** No agent name in the origin: two A2AAgent objects for one remote continue the same context. */
  protected override newThread(): AgentThread {
    return sharedServiceThread(A2A_PROVIDER_ID);
  }

  protected override channelOptions(): Pick<AgentThreadChannelOptions, 'toInput'> {
    return { toInput: asOneMessage };
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
