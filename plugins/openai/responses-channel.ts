import {
  type AgentThread,
  AgentThreadChannelProviderBase,
  type AgentThreadChannelOptions,
  type AIAgent,
  ChatAgent,
  type ChatMessage,
  sharedServiceThread,
  withoutAttribution,
} from 'skein';
import { openAIServiceIdentity } from './openai-channel-key.js';
import { OpenAIResponsesClient } from './openai-responses-client.js';

export const OPENAI_RESPONSES_CHANNEL_TYPE = 'openai-responses-channel';

type ResponsesAgent = ChatAgent & { chatClient: OpenAIResponsesClient };

/**
 * Group-chat channels for Responses agents with `store: true`: every such agent on the same
 * service (base URL and API key identity) continues one stored chain or conversation. Agents
 * with `store: false` keep local history and use the core's message-store channel instead.
 */
export class OpenAIResponsesChannelProvider extends AgentThreadChannelProviderBase<ResponsesAgent> {
  constructor() {
    super(OPENAI_RESPONSES_CHANNEL_TYPE);
  }

  override supports(agent: AIAgent): boolean {
    return agent instanceof ChatAgent && agent.chatClient instanceof OpenAIResponsesClient && agent.threadKind === 'service';
  }

  channelKey(agent: AIAgent): string {
    const client = (agent as ResponsesAgent).chatClient;
    return `${client.providerId}:${openAIServiceIdentity(client.client)}`;
  }

  /** No agent name in the origin: every Responses agent of the key continues it. */
  protected override newThread(agent: ResponsesAgent): AgentThread {
    return sharedServiceThread(agent.chatClient.providerId);
  }

  protected override channelOptions(agent: ResponsesAgent): Pick<AgentThreadChannelOptions, 'readHistory'> {
    const client = agent.chatClient;
    return { readHistory: (thread, signal) => readResponsesHistory(client, thread.serviceThreadId, signal) };
  }
}

/**
 * The messages of a conversation or a `previous_response_id` chain, read as the client reads
 * them (`getServiceThreadMessages`: each item once, replies with their response id, which the
 * channel finds its last turn by), as the chat shows them: the user's and the agents' words.
 */
export async function readResponsesHistory(client: OpenAIResponsesClient, id: string | undefined, signal?: AbortSignal): Promise<ChatMessage[]> {
  if (id === undefined) return [];
  return (await client.getServiceThreadMessages(id, { signal })).flatMap((message) => {
    const contents = message.contents.filter((c) => c.kind === 'text');
    if ((message.role !== 'user' && message.role !== 'assistant') || contents.length === 0) return [];
    // Another participant's words were sent as `[name]: text`; read back, they are that author's text again.
    return [withoutAttribution({ ...message, contents })];
  });
}
