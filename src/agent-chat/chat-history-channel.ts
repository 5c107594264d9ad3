// Observable alone: the rxjs index loads every operator (megabytes of RSS); same class either way.
// The declarations name rxjs's public Observable type; the class comes from its own module.
import type { Observable } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import type { AIAgent } from '../agents/ai-agent.js';
import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import { ChatAgent } from '../agents/chat-agent.js';
import { ThreadCompatibilityError } from '../errors/skein-error.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { JsonObject, JsonValue } from '../serialization/json.js';
import { checkShape, expectObject } from '../serialization/shape.js';
import { AgentThread } from '../threads/agent-thread.js';
import { InMemoryChatMessageStore } from '../threads/in-memory-chat-message-store.js';
import type { AgentChannel, ChannelInvokeOptions, SerializedChannel } from './agent-channel.js';
import type { ChannelProvider, ChannelRestoreContext } from './channel-provider.js';
import { authoredBy, viewFor } from './chat-message-view.js';

export const CHAT_HISTORY_CHANNEL_TYPE = 'chat-history-channel';
/** Every message-store ChatAgent (Chat Completions, Responses with `store: false`, ...) shares this channel. */
export const CHAT_HISTORY_CHANNEL_KEY = 'message-store';

/**
 * A channel whose history Skein keeps: the messages themselves. Each turn runs the agent on a
 * thread holding the history as that agent sees it, so agents of different providers share it.
 */
export class ChatHistoryChannel implements AgentChannel {
  readonly type = CHAT_HISTORY_CHANNEL_TYPE;
  #messages: ChatMessage[];
  /** Each agent's thread state (context providers, pending approvals), by agent name. */
  #states: Record<string, JsonObject>;

  constructor(
    readonly key: string,
    readonly ownerName: string,
    init: { messages?: readonly ChatMessage[]; states?: Record<string, JsonObject> } = {},
  ) {
    this.#messages = [...(init.messages ?? [])];
    this.#states = { ...init.states };
  }

  async receive(messages: readonly ChatMessage[]): Promise<void> {
    this.#messages.push(...messages);
  }

  async invoke(agent: AIAgent, options: ChannelInvokeOptions = {}): Promise<ChatMessage[]> {
    const { thread, input } = this.#turnThread(agent);
    const response = await agent.run(input, { thread, signal: options.signal });
    return this.#commit(agent, thread, authoredBy(agent.name, response.messages));
  }

  invokeStream(agent: AIAgent, options: ChannelInvokeOptions = {}): Observable<AgentRunResponseUpdate> {
    return new RxObservable<AgentRunResponseUpdate>((subscriber) => {
      const { thread, input, historyLength } = this.#turnThread(agent);
      const inner = agent.runStream(input, { thread, signal: options.signal }).subscribe({
        next: (update) => subscriber.next(update),
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          // The agent committed input + reply to the turn's store; the reply is what follows the input.
          thread.messageStore!.listMessages().then(
            (all) => {
              const produced = this.#commit(agent, thread, authoredBy(agent.name, all.slice(historyLength + input.length)));
              options.onProduced?.(produced);
              subscriber.complete();
            },
            (error: unknown) => subscriber.error(error),
          );
        },
      });
      return () => inner.unsubscribe();
    });
  }

  async getHistory(): Promise<ChatMessage[]> {
    return [...this.#messages];
  }

  async reset(): Promise<void> {
    this.#messages = [];
    this.#states = {};
  }

  async serialize(): Promise<SerializedChannel> {
    return {
      $type: this.type,
      version: 1,
      key: this.key,
      agent: this.ownerName,
      messages: this.#messages as unknown as JsonValue[],
      states: this.#states,
    };
  }

  /** A throwaway thread: history before the agent's last reply in the store, the rest as this turn's input. */
  #turnThread(agent: AIAgent): { thread: AgentThread; input: ChatMessage[]; historyLength: number } {
    if (!(agent instanceof ChatAgent)) {
      throw new ThreadCompatibilityError(`A "${this.type}" channel runs ChatAgents; agent "${agent.name}" is a ${agent.constructor.name}.`);
    }
    const view = viewFor(agent.name, this.#messages);
    let split = view.length;
    while (split > 0 && !(view[split - 1]!.role === 'assistant' && view[split - 1]!.authorName === agent.name)) split--;
    const history = view.slice(0, split);
    const thread = new AgentThread({
      origin: { provider: agent.chatClient.providerId },
      messageStore: new InMemoryChatMessageStore(history),
      state: agent.name !== undefined ? this.#states[agent.name] : undefined,
    });
    return { thread, input: view.slice(split), historyLength: history.length };
  }

  #commit(agent: AIAgent, thread: AgentThread, produced: ChatMessage[]): ChatMessage[] {
    this.#messages.push(...produced);
    if (agent.name !== undefined && Object.keys(thread.state).length > 0) this.#states[agent.name] = thread.state;
    return produced;
  }
}

/** The core's channel for every ChatAgent that keeps its history in a message store. */
export class ChatHistoryChannelProvider implements ChannelProvider {
  readonly channelTypes = [CHAT_HISTORY_CHANNEL_TYPE];

  supports(agent: AIAgent): boolean {
    return agent instanceof ChatAgent && agent.threadKind === 'message-store';
  }

  channelKey(): string {
    return CHAT_HISTORY_CHANNEL_KEY;
  }

  createChannel(agent: AIAgent): AgentChannel {
    return new ChatHistoryChannel(CHAT_HISTORY_CHANNEL_KEY, agent.name ?? '');
  }

  async restoreChannel(serialized: SerializedChannel, agent: AIAgent, context: ChannelRestoreContext): Promise<AgentChannel> {
    const shape = checkShape(serialized, context.path, {
      required: { $type: 'string', version: 'number', key: 'string', agent: 'string', messages: 'array' },
      optional: { states: 'object' },
    });
    const states: Record<string, JsonObject> = {};
    for (const [name, state] of Object.entries((shape.states ?? {}) as Record<string, unknown>)) {
      states[name] = expectObject(state, `${context.path}.states.${name}`) as JsonObject;
    }
    return new ChatHistoryChannel(serialized.key, agent.name ?? '', {
      messages: context.registry.readMessages(shape.messages, `${context.path}.messages`),
      states,
    });
  }
}
