import { AgentThread, AgentThreadChannel, type AgentThreadChannelState, type AgentChannel, type AIAgent, type ChannelProvider, type ChannelRestoreContext, type SerializedChannel, withAttribution, withoutAttribution } from 'skein';
import { openAIServiceIdentity } from '../openai-channel-key.js';
import { OPENAI_ASSISTANTS_CLIENT_ID, OpenAIAssistantAgent } from './openai-assistant-agent.js';

export const OPENAI_ASSISTANT_CHANNEL_TYPE = 'openai-assistant-channel';

/**
 * Group-chat channels for Assistants agents: every assistant on the same service (base URL and
 * API key identity) shares one assistant thread; other agents' messages are added to it with
 * the next run, as user messages that name their author (`[writer]: ...`).
 */
export class OpenAIAssistantChannelProvider implements ChannelProvider {
  readonly channelTypes = [OPENAI_ASSISTANT_CHANNEL_TYPE];

  supports(agent: AIAgent): boolean {
    return agent instanceof OpenAIAssistantAgent;
  }

  channelKey(agent: AIAgent): string {
    return `${OPENAI_ASSISTANTS_CLIENT_ID}:${openAIServiceIdentity((agent as OpenAIAssistantAgent).client)}`;
  }

  createChannel(agent: AIAgent): AgentChannel {
    return this.#channel(agent as OpenAIAssistantAgent, this.channelKey(agent), { thread: sharedThread() });
  }

  async restoreChannel(serialized: SerializedChannel, agent: AIAgent, context: ChannelRestoreContext): Promise<AgentChannel> {
    return this.#channel(agent as OpenAIAssistantAgent, serialized.key, await AgentThreadChannel.readState(serialized, agent, context));
  }

  #channel(agent: OpenAIAssistantAgent, key: string, state: AgentThreadChannelState): AgentChannel {
    return new AgentThreadChannel({
      type: OPENAI_ASSISTANT_CHANNEL_TYPE,
      key,
      owner: agent,
      newThread: sharedThread,
      // Thread messages have no author field: other participants' words name their author in the text.
      toInput: (messages) => messages.map(withAttribution),
      readHistory: async (thread, signal) => (await agent.getThreadMessages(thread, signal)).map(withoutAttribution),
      ...state,
    });
  }
}

/** No agent name in the origin: every assistant of the key runs on it. */
function sharedThread(): AgentThread {
  return new AgentThread({ origin: { provider: OPENAI_ASSISTANTS_CLIENT_ID } });
}
