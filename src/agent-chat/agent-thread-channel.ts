// Observable alone: the rxjs index loads every operator (megabytes of RSS); same class either way.
// The declarations name rxjs's public Observable type; the class comes from its own module.
import type { Observable } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import type { AIAgent } from '../agents/ai-agent.js';
import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { JsonValue } from '../serialization/json.js';
import { checkShape } from '../serialization/shape.js';
import type { AgentThread } from '../threads/agent-thread.js';
import type { AgentChannel, ChannelInvokeOptions, SerializedChannel } from './agent-channel.js';
import type { ChannelProvider, ChannelRestoreContext } from './channel-provider.js';
import { authoredBy, messagesFromUpdates, viewFor } from './chat-message-view.js';

export const AGENT_THREAD_CHANNEL_TYPE = 'agent-thread-channel';

export interface AgentThreadChannelOptions {
  /** The `$type` it serializes as (one per provider). */
  type: string;
  key: string;
  /** The agent that made the channel: it reads and deletes the thread. */
  owner: AIAgent;
  /** The shared thread. Shared service threads carry no agent name in their origin, so every agent of the key may continue them. */
  thread: AgentThread;
  /** A fresh thread for `reset()`. */
  newThread: () => AgentThread;
  /**
   * Reads the thread's history from the service. Without it the channel keeps a transcript
   * of what passed through it (for services that cannot list a conversation).
   */
  readHistory?: (thread: AgentThread, signal?: AbortSignal) => Promise<ChatMessage[]>;
  /**
   * Shapes the waiting messages (already as the invoked agent sees them) into the turn's input,
   * for services that take one message per turn. Default: as they are.
   */
  toInput?: (messages: ChatMessage[]) => ChatMessage[];
  pending?: readonly ChatMessage[];
  transcript?: readonly ChatMessage[];
}

/**
 * A channel over an agent thread the service keeps (an assistant thread, a Responses chain or
 * conversation, a Foundry thread, an A2A context). Messages others produced wait in `pending`
 * and go to the service as the input of the next turn: one request instead of one per message,
 * and a failed turn keeps them for the next.
 */
export class AgentThreadChannel implements AgentChannel {
  readonly type: string;
  readonly key: string;
  readonly owner: AIAgent;
  #thread: AgentThread;
  #pending: ChatMessage[];
  #transcript: ChatMessage[] | undefined;
  readonly #newThread: () => AgentThread;
  readonly #readHistory: AgentThreadChannelOptions['readHistory'];
  readonly #toInput: (messages: ChatMessage[]) => ChatMessage[];

  constructor(options: AgentThreadChannelOptions) {
    this.type = options.type;
    this.key = options.key;
    this.owner = options.owner;
    this.#thread = options.thread;
    this.#newThread = options.newThread;
    this.#readHistory = options.readHistory;
    this.#toInput = options.toInput ?? ((messages) => messages);
    this.#pending = [...(options.pending ?? [])];
    this.#transcript = options.readHistory ? undefined : [...(options.transcript ?? [])];
  }

  /** The shared thread (its `serviceThreadId` once the service made it). */
  get thread(): AgentThread {
    return this.#thread;
  }

  async receive(messages: readonly ChatMessage[]): Promise<void> {
    this.#pending.push(...messages);
  }

  async invoke(agent: AIAgent, options: ChannelInvokeOptions = {}): Promise<ChatMessage[]> {
    const response = await agent.run(this.#input(agent), { thread: this.#thread, signal: options.signal });
    return this.#commit(authoredBy(agent.name, response.messages));
  }

  invokeStream(agent: AIAgent, options: ChannelInvokeOptions = {}): Observable<AgentRunResponseUpdate> {
    return new RxObservable<AgentRunResponseUpdate>((subscriber) => {
      const updates: AgentRunResponseUpdate[] = [];
      const inner = agent.runStream(this.#input(agent), { thread: this.#thread, signal: options.signal }).subscribe({
        next: (update) => {
          updates.push(update);
          subscriber.next(update);
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          options.onProduced?.(this.#commit(messagesFromUpdates(updates, agent.name)));
          subscriber.complete();
        },
      });
      return () => inner.unsubscribe();
    });
  }

  async getHistory(options: ChannelInvokeOptions = {}): Promise<ChatMessage[]> {
    const held = this.#readHistory ? await this.#readHistory(this.#thread, options.signal) : this.#transcript!;
    return [...held, ...this.#pending];
  }

  async reset(): Promise<void> {
    if (this.#thread.serviceThreadId !== undefined) await this.owner.deleteThread(this.#thread);
    this.#thread = this.#newThread();
    this.#pending = [];
    if (this.#transcript) this.#transcript = [];
  }

  async serialize(): Promise<SerializedChannel> {
    const out: SerializedChannel = {
      $type: this.type,
      version: 1,
      key: this.key,
      agent: this.owner.name ?? '',
      thread: (await this.#thread.serialize()) as unknown as JsonValue,
      pending: this.#pending as unknown as JsonValue[],
    };
    if (this.#transcript) out.transcript = this.#transcript as unknown as JsonValue[];
    return out;
  }

  /** Reads the fields an AgentThreadChannel wrote; the thread is checked by `agent.deserializeThread`. */
  static async readState(
    serialized: SerializedChannel,
    agent: AIAgent,
    context: ChannelRestoreContext,
  ): Promise<{ thread: AgentThread; pending: ChatMessage[]; transcript?: ChatMessage[] }> {
    const shape = checkShape(serialized, context.path, {
      required: { $type: 'string', version: 'number', key: 'string', agent: 'string', thread: 'object', pending: 'array' },
      optional: { transcript: 'array' },
    });
    const thread = await agent.deserializeThread(shape.thread);
    const pending = context.registry.readMessages(shape.pending, `${context.path}.pending`);
    const transcript = shape.transcript === undefined ? undefined : context.registry.readMessages(shape.transcript, `${context.path}.transcript`);
    return { thread, pending, transcript };
  }

  #input(agent: AIAgent): ChatMessage[] {
    return this.#pending.length ? this.#toInput(viewFor(agent.name, this.#pending)) : [];
  }

  #commit(produced: ChatMessage[]): ChatMessage[] {
    this.#transcript?.push(...this.#pending, ...produced);
    this.#pending = [];
    return produced;
  }
}

/**
 * The fallback for any agent no plugin claims: a channel of its own (the key names the agent),
 * over a thread of that agent, with a local transcript for `getHistory`.
 */
export class AgentThreadChannelProvider implements ChannelProvider {
  readonly channelTypes = [AGENT_THREAD_CHANNEL_TYPE];

  supports(): boolean {
    return true;
  }

  channelKey(agent: AIAgent): string {
    return `agent:${agent.constructor.name}:${agent.name ?? ''}`;
  }

  createChannel(agent: AIAgent): AgentChannel {
    return new AgentThreadChannel({
      type: AGENT_THREAD_CHANNEL_TYPE,
      key: this.channelKey(agent),
      owner: agent,
      thread: agent.getNewThread(),
      newThread: () => agent.getNewThread(),
    });
  }

  async restoreChannel(serialized: SerializedChannel, agent: AIAgent, context: ChannelRestoreContext): Promise<AgentChannel> {
    const state = await AgentThreadChannel.readState(serialized, agent, context);
    return new AgentThreadChannel({
      type: AGENT_THREAD_CHANNEL_TYPE,
      key: serialized.key,
      owner: agent,
      newThread: () => agent.getNewThread(),
      ...state,
    });
  }
}
