import { type AgentThread, AgentThreadChannelProviderBase, type AgentThreadChannelOptions, type AIAgent, authorsInText, sharedServiceThread } from 'skein';
import { openAIServiceIdentity } from '../openai-channel-key.js';
import { OPENAI_ASSISTANTS_CLIENT_ID, OpenAIAssistantAgent } from './openai-assistant-agent.js';

export const OPENAI_ASSISTANT_CHANNEL_TYPE = 'openai-assistant-channel';

/**
 * Group-chat channels for Assistants agents: every assistant on the same service (base URL and
 * API key identity) shares one assistant thread; other agents' messages are added to it with
 * the next run, as user messages that name their author (`[writer]: ...`).
 */
export class OpenAIAssistantChannelProvider extends AgentThreadChannelProviderBase<OpenAIAssistantAgent> {
  constructor() {
    super(OPENAI_ASSISTANT_CHANNEL_TYPE, OpenAIAssistantAgent);
  }

  channelKey(agent: AIAgent): string {
    return `${OPENAI_ASSISTANTS_CLIENT_ID}:${openAIServiceIdentity((agent as OpenAIAssistantAgent).client)}`;
  }

  /** No agent name in the origin: every assistant of the key runs on it. */
  protected override newThread(): AgentThread {
    return sharedServiceThread(OPENAI_ASSISTANTS_CLIENT_ID);
  }

  // Thread messages have no author field: other participants' words name their author in the text.
  protected override channelOptions(agent: OpenAIAssistantAgent): Pick<AgentThreadChannelOptions, 'readHistory' | 'toInput'> {
    return authorsInText((thread, signal) => agent.getThreadMessages(thread, signal));
  }
}
