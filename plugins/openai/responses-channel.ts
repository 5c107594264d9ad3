import type OpenAI from 'openai';
import {
  AgentThread,
  AgentThreadChannel,
  type AgentThreadChannelState,
  type AgentChannel,
  type AIAgent,
  ChatAgent,
  type ChannelProvider,
  type ChannelRestoreContext,
  type ChatMessage,
  type SerializedChannel,
  withoutAttribution,
} from 'skein';
import { openAIServiceIdentity } from './openai-channel-key.js';
import { toSkeinError } from './openai-errors.js';
import { OpenAIResponsesClient } from './openai-responses-client.js';

export const OPENAI_RESPONSES_CHANNEL_TYPE = 'openai-responses-channel';

type ResponsesAgent = ChatAgent & { chatClient: OpenAIResponsesClient };

/**
 * Group-chat channels for Responses agents with `store: true`: every such agent on the same
 * service (base URL and API key identity) continues one stored chain or conversation. Agents
 * with `store: false` keep local history and use the core's message-store channel instead.
 */
export class OpenAIResponsesChannelProvider implements ChannelProvider {
  readonly channelTypes = [OPENAI_RESPONSES_CHANNEL_TYPE];

  supports(agent: AIAgent): boolean {
    return agent instanceof ChatAgent && agent.chatClient instanceof OpenAIResponsesClient && agent.threadKind === 'service';
  }

  channelKey(agent: AIAgent): string {
    const client = (agent as ResponsesAgent).chatClient;
    return `${client.providerId}:${openAIServiceIdentity(client.client)}`;
  }

  createChannel(agent: AIAgent): AgentChannel {
    return this.#channel(agent as ResponsesAgent, this.channelKey(agent), { thread: sharedThread(agent as ResponsesAgent) });
  }

  async restoreChannel(serialized: SerializedChannel, agent: AIAgent, context: ChannelRestoreContext): Promise<AgentChannel> {
    return this.#channel(agent as ResponsesAgent, serialized.key, await AgentThreadChannel.readState(serialized, agent, context));
  }

  #channel(agent: ResponsesAgent, key: string, state: AgentThreadChannelState): AgentChannel {
    const client = agent.chatClient;
    return new AgentThreadChannel({
      type: OPENAI_RESPONSES_CHANNEL_TYPE,
      key,
      owner: agent,
      newThread: () => sharedThread(agent),
      readHistory: (thread, signal) => readResponsesHistory(client, thread.serviceThreadId, signal),
      ...state,
    });
  }
}

/** No agent name in the origin: every Responses agent of the key continues it. */
function sharedThread(agent: ResponsesAgent): AgentThread {
  return new AgentThread({ origin: { provider: agent.chatClient.providerId } });
}

/** The messages of a conversation, or of a `previous_response_id` chain walked back to its start (replies with their response id). */
export async function readResponsesHistory(client: OpenAIResponsesClient, id: string | undefined, signal?: AbortSignal): Promise<ChatMessage[]> {
  if (id === undefined) return [];
  const sdk = client.client;
  try {
    if (id.startsWith('conv_')) {
      const out: ChatMessage[] = [];
      for await (const item of sdk.conversations.items.list(id, { order: 'asc' }, { signal })) {
        const message = itemMessage(item as unknown as Item);
        if (message) out.push(message);
      }
      return out;
    }
    const turns: ChatMessage[][] = [];
    for (let current: string | null | undefined = id; current; ) {
      const response: OpenAI.Responses.Response = await sdk.responses.retrieve(current, {}, { signal });
      const turn: ChatMessage[] = [];
      for await (const item of sdk.responses.inputItems.list(current, { order: 'asc' }, { signal })) {
        const message = itemMessage(item as unknown as Item);
        if (message) turn.push(message);
      }
      // A reply carries its response id, as `run` returned it: the channel finds its last turn by it.
      for (const item of response.output) {
        const message = itemMessage(item as unknown as Item);
        if (message) turn.push({ ...message, messageId: response.id });
      }
      turns.unshift(turn);
      current = response.previous_response_id;
    }
    return turns.flat();
  } catch (error) {
    throw toSkeinError(client.providerId, error, signal);
  }
}

interface Item {
  type?: string;
  id?: string;
  role?: string;
  content?: string | { type: string; text?: string }[];
}

/** A message item as a Skein message; tool items are left out (history is for reading). */
function itemMessage(item: Item): ChatMessage | undefined {
  if ((item.type !== undefined && item.type !== 'message') || (item.role !== 'user' && item.role !== 'assistant')) return undefined;
  const text = typeof item.content === 'string' ? item.content : (item.content ?? []).map((p) => p.text ?? '').join('');
  const message: ChatMessage = { role: item.role, contents: [{ kind: 'text', text }] };
  if (item.id) message.messageId = item.id;
  // Another participant's words were sent as `[name]: text`; read back, they are that author's text again.
  return withoutAttribution(message);
}
