// Observable alone: the rxjs index loads every operator (megabytes of RSS); same class either way.
// The declarations name rxjs's public Observable type; the class comes from its own module.
import type { Observable, Subscription } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import type { AIAgent } from '../agents/ai-agent.js';
import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import { SerializationError } from '../errors/skein-error.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { JsonValue } from '../serialization/json.js';
import { checkShape } from '../serialization/shape.js';
import { AgentThread } from '../threads/agent-thread.js';
import type { AgentChannel, ChannelInvokeOptions, SerializedChannel } from './agent-channel.js';
import type { ChannelProvider, ChannelRestoreContext } from './channel-provider.js';
import { authoredBy, messagesFromUpdates, viewFor, withAttribution, withoutAttribution } from './chat-message-view.js';
import { deliveredCount, idsOf, newestIds } from './pending-delivery.js';

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
  /** A turn with waiting messages did not finish, so the service may hold some of them. */
  unsettled?: boolean;
  /** Service ids of the newest messages the channel knows the thread holds. */
  known?: readonly string[];
}

/** What a channel over an agent thread saves and reads back (besides its envelope). */
export type AgentThreadChannelState = Pick<AgentThreadChannelOptions, 'thread' | 'pending' | 'transcript' | 'unsettled' | 'known'>;

/**
 * A channel over an agent thread the service keeps (an assistant thread, a Responses chain or
 * conversation, a Foundry thread, an A2A context). Messages others produced wait in `pending`
 * and go to the service as the input of the next turn: one request instead of one per message.
 *
 * Each waiting message reaches the thread exactly once. A committed turn delivered them all. A
 * turn that failed or was aborted may or may not have delivered them (the service takes the
 * input with the run, before the run can fail), so the channel is then "unsettled": before its
 * next turn (or history read) it reads the thread and drops what already arrived
 * (`deliveredCount`). The flag and the point to search from are saved with the channel, so
 * this holds across serialize / resume too. A channel that cannot read its thread (A2A) sends
 * them again.
 */
export class AgentThreadChannel implements AgentChannel {
  readonly type: string;
  readonly key: string;
  readonly owner: AIAgent;
  #thread: AgentThread;
  #pending: ChatMessage[];
  #transcript: ChatMessage[] | undefined;
  #unsettled: boolean;
  #known: string[];
  #running = false;
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
    this.#unsettled = (options.unsettled ?? false) && options.readHistory !== undefined;
    this.#known = [...(options.known ?? [])];
  }

  /** The shared thread (its `serviceThreadId` once the service made it). */
  get thread(): AgentThread {
    return this.#thread;
  }

  async receive(messages: readonly ChatMessage[]): Promise<void> {
    this.#pending.push(...messages);
  }

  async invoke(agent: AIAgent, options: ChannelInvokeOptions = {}): Promise<ChatMessage[]> {
    await this.#settle(options.signal);
    const input = this.#begin(agent);
    try {
      const response = await agent.run(input, { thread: this.#thread, signal: options.signal });
      return this.#commit(authoredBy(agent.name, response.messages));
    } finally {
      this.#running = false;
    }
  }

  invokeStream(agent: AIAgent, options: ChannelInvokeOptions = {}): Observable<AgentRunResponseUpdate> {
    return new RxObservable<AgentRunResponseUpdate>((subscriber) => {
      let inner: Subscription | undefined;
      const start = () => {
        const updates: AgentRunResponseUpdate[] = [];
        const input = this.#begin(agent);
        inner = agent.runStream(input, { thread: this.#thread, signal: options.signal }).subscribe({
          next: (update) => {
            updates.push(update);
            subscriber.next(update);
          },
          error: (error: unknown) => {
            this.#running = false;
            subscriber.error(error);
          },
          complete: () => {
            this.#running = false;
            options.onProduced?.(this.#commit(messagesFromUpdates(updates, agent.name)));
            subscriber.complete();
          },
        });
      };
      this.#settle(options.signal).then(
        () => {
          if (!subscriber.closed) start();
        },
        (error: unknown) => subscriber.error(error),
      );
      return () => {
        inner?.unsubscribe();
        this.#running = false;
      };
    });
  }

  async getHistory(options: ChannelInvokeOptions = {}): Promise<ChatMessage[]> {
    if (!this.#readHistory) return [...this.#transcript!, ...this.#pending];
    const held = await this.#readHistory(this.#thread, options.signal);
    // While a turn runs its input is on its way; what arrived is sorted out after it ends.
    if (this.#unsettled && !this.#running) this.#reconcile(held);
    return [...held, ...this.#pending];
  }

  async reset(): Promise<void> {
    if (this.#thread.serviceThreadId !== undefined) await this.owner.deleteThread(this.#thread);
    this.#thread = this.#newThread();
    this.#pending = [];
    this.#unsettled = false;
    this.#known = [];
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
    if (this.#unsettled) out.unsettled = true;
    if (this.#known.length > 0) out.known = [...this.#known];
    return out;
  }

  /** Reads the fields an AgentThreadChannel wrote; the thread is checked by `agent.deserializeThread`. */
  static async readState(
    serialized: SerializedChannel,
    agent: AIAgent,
    context: ChannelRestoreContext,
  ): Promise<AgentThreadChannelState & { pending: ChatMessage[] }> {
    const shape = checkShape(serialized, context.path, {
      required: { $type: 'string', version: 'number', key: 'string', agent: 'string', thread: 'object', pending: 'array' },
      optional: { transcript: 'array', unsettled: 'boolean', known: 'array' },
    });
    const thread = await agent.deserializeThread(shape.thread);
    const pending = context.registry.readMessages(shape.pending, `${context.path}.pending`);
    const transcript = shape.transcript === undefined ? undefined : context.registry.readMessages(shape.transcript, `${context.path}.transcript`);
    const known = ((shape.known ?? []) as unknown[]).map((id, i) => {
      if (typeof id !== 'string') throw new SerializationError(`${context.path}.known[${i}]`, `expected a message id (string), found ${typeof id}.`);
      return id;
    });
    return { thread, pending, transcript, unsettled: shape.unsettled === true, known };
  }

  /** The turn's input; from here until it commits, the waiting messages may be on their way to the service. */
  #begin(agent: AIAgent): ChatMessage[] {
    this.#running = true;
    if (this.#pending.length === 0) return [];
    if (this.#readHistory) this.#unsettled = true;
    return this.#toInput(viewFor(agent.name, this.#pending));
  }

  /** After an unfinished turn: drops the waiting messages the thread already holds. */
  async #settle(signal: AbortSignal | undefined): Promise<void> {
    if (!this.#unsettled || !this.#readHistory) return;
    this.#reconcile(await this.#readHistory(this.#thread, signal));
  }

  #reconcile(history: readonly ChatMessage[]): void {
    this.#pending.splice(0, deliveredCount(history, this.#pending, this.#known));
    const newest = newestIds(history);
    if (newest.length > 0) this.#known = newest;
    this.#unsettled = false;
  }

  #commit(produced: ChatMessage[]): ChatMessage[] {
    this.#transcript?.push(...this.#pending, ...produced);
    this.#pending = [];
    this.#unsettled = false;
    const ids = idsOf(produced);
    if (ids.length > 0) this.#known = ids;
    return produced;
  }
}

/**
 * The shape every provider of AgentThreadChannels shares: a new channel starts on `newThread`
 * under `channelKey`, a restored one goes on from its saved state, and `reset()` starts a
 * `newThread` again. A subclass says which agents it serves, their key, and what differs for
 * its service (`channelOptions`: how it reads the thread, how a turn's input is shaped).
 */
export abstract class AgentThreadChannelProviderBase<TAgent extends AIAgent = AIAgent> implements ChannelProvider {
  readonly channelTypes: string[];

  /**
   * @param channelType the `$type` its channels serialize as.
   * @param agentType the class of the agents it serves (`supports`); a subclass may test more.
   */
  constructor(
    readonly channelType: string,
    readonly agentType?: abstract new (...args: never[]) => TAgent,
  ) {
    this.channelTypes = [channelType];
  }

  supports(agent: AIAgent): boolean {
    return this.agentType !== undefined && agent instanceof this.agentType;
  }

  abstract channelKey(agent: AIAgent): string;

  /** The thread a channel starts on and `reset()` starts again. Default: the agent's own new thread. */
  protected newThread(agent: TAgent): AgentThread {
    return agent.getNewThread();
  }

  /** What this service's channels do differently. Default: a local transcript, input as it is. */
  protected channelOptions(_agent: TAgent): Pick<AgentThreadChannelOptions, 'readHistory' | 'toInput'> {
    return {};
  }

  createChannel(agent: AIAgent): AgentChannel {
    return this.#channel(agent as TAgent, this.channelKey(agent), { thread: this.newThread(agent as TAgent) });
  }

  async restoreChannel(serialized: SerializedChannel, agent: AIAgent, context: ChannelRestoreContext): Promise<AgentChannel> {
    return this.#channel(agent as TAgent, serialized.key, await AgentThreadChannel.readState(serialized, agent, context));
  }

  #channel(agent: TAgent, key: string, state: AgentThreadChannelState): AgentChannel {
    return new AgentThreadChannel({
      type: this.channelType,
      key,
      owner: agent,
      newThread: () => this.newThread(agent),
      ...this.channelOptions(agent),
      ...state,
    });
  }
}

/**
 * A thread that every agent of one channel key continues: no agent name in its origin, only the
 * provider, so any of them may run on it.
 */
export function sharedServiceThread(provider: string): AgentThread {
  return new AgentThread({ origin: { provider } });
}

/**
 * For service threads whose messages have no author field: other participants' words go in
 * naming their author in the text (`[writer]: ...`) and are read back as that author's again.
 */
export function authorsInText(
  readThread: (thread: AgentThread, signal?: AbortSignal) => Promise<ChatMessage[]>,
): Pick<AgentThreadChannelOptions, 'readHistory' | 'toInput'> {
  return {
    toInput: (messages) => messages.map(withAttribution),
    readHistory: async (thread, signal) => (await readThread(thread, signal)).map(withoutAttribution),
  };
}

/**
 * The fallback for any agent no plugin claims: a channel of its own (the key names the agent),
 * over a thread of that agent, with a local transcript for `getHistory`.
 */
export class AgentThreadChannelProvider extends AgentThreadChannelProviderBase {
  constructor() {
    super(AGENT_THREAD_CHANNEL_TYPE);
  }

  override supports(): boolean {
    return true;
  }

  channelKey(agent: AIAgent): string {
    return `agent:${agent.constructor.name}:${agent.name ?? ''}`;
  }
}
