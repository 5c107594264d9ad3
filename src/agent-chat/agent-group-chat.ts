import type { Container } from 'inversify';
// Observable alone: the rxjs index loads every operator (megabytes of RSS); same classes either way.
// The declarations name rxjs's public Observable type; the class comes from its own module.
import type { Observable, Subscription } from 'rxjs';
import { Observable as RxObservable } from 'rxjs/internal/Observable';
import type { AIAgent } from '../agents/ai-agent.js';
import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import { linkSignal } from '../agents/chat-agent.js';
import { agentToken } from '../container/agent-token.js';
import { AbortError, SerializationError } from '../errors/skein-error.js';
import { type AgentInput, type ChatMessage, toMessages } from '../messages/chat-message.js';
import { SerializationRegistry, SerializationRegistryImpl } from '../serialization/serialization-registry.js';
import { checkShape, expectObject } from '../serialization/shape.js';
import { assertUntrustedJson, describe } from '../serialization/untrusted-json.js';
import type { AgentChannel, SerializedChannel } from './agent-channel.js';
import { AgentChatConfigurationError, ChatBusyError } from './agent-chat-errors.js';
import { AgentThreadChannelProvider } from './agent-thread-channel.js';
import { ChannelProvider } from './channel-provider.js';
import { ChatHistoryChannelProvider } from './chat-history-channel.js';
import { shareableMessages } from './chat-message-view.js';
import { type SelectionStrategy, SequentialSelectionStrategy } from './selection-strategy.js';
import { MaxTurnsTermination, type TerminationStrategy } from './termination-strategy.js';

export const AGENT_GROUP_CHAT_TYPE = 'agent-group-chat';
export const AGENT_GROUP_CHAT_VERSION = 1;
const DEFAULT_MAX_TURNS = 20;

/** The core's channel providers, tried after every plugin's. */
export const CORE_CHANNEL_PROVIDERS: readonly ChannelProvider[] = [new ChatHistoryChannelProvider(), new AgentThreadChannelProvider()];

export interface AgentGroupChatOptions {
  /** The participants; names must be set and unique (they author the messages). */
  agents: readonly AIAgent[];
  /** Who speaks next. Default: in turn. */
  selection?: SelectionStrategy;
  /** When an invocation stops. Default: after one round (one turn per agent). */
  termination?: TerminationStrategy;
  /** A hard cap on turns per invocation, whatever the termination strategy says. Default 20. */
  maxTurns?: number;
  /** Channel providers (the plugins' contributions); the core's fallbacks are added after them. */
  channelProviders?: readonly ChannelProvider[];
  /** Reads serialized chats back (`deserialize`); the container's, or the core defaults. */
  serializationRegistry?: SerializationRegistry;
}

export interface AgentGroupChatInvokeOptions {
  signal?: AbortSignal;
  /** Run exactly one turn of this agent instead of asking the selection strategy. */
  agent?: AIAgent;
}

/** One streamed update of a group chat: always tagged with its author and turn. */
export interface AgentChatUpdate extends AgentRunResponseUpdate {
  authorName: string;
  turn: number;
}

/** The plain-JSON form of a chat. */
export interface SerializedAgentGroupChat {
  $type: typeof AGENT_GROUP_CHAT_TYPE;
  version: number;
  agents: string[];
  messages: ChatMessage[];
  channels: SerializedChannel[];
}

export interface AgentGroupChatFromContainerOptions extends Omit<AgentGroupChatOptions, 'agents' | 'channelProviders' | 'serializationRegistry'> {
  /** Agents by config name (resolved with `agentToken`) or as objects. */
  agents: readonly (string | AIAgent)[];
}

export interface AgentGroupChatResumeOptions extends Omit<AgentGroupChatOptions, 'agents'> {
  /** Where the agents (by name), channel providers and registry come from. */
  container?: Container;
  /** The participants as objects, instead of resolving them from the container. */
  agents?: readonly AIAgent[];
}

interface Participant {
  agent: AIAgent;
  provider: ChannelProvider;
  channel: AgentChannel;
}

/**
 * A conversation among several agents, each keeping the shared history in its own threading
 * model through a channel. One invocation at a time: a second one while the first runs fails
 * with ChatBusyError.
 */
export class AgentGroupChat {
  readonly agents: readonly AIAgent[];
  readonly selection: SelectionStrategy;
  readonly termination: TerminationStrategy;
  readonly maxTurns: number;
  readonly #participants = new Map<AIAgent, Participant>();
  readonly #channels = new Map<string, AgentChannel>();
  #history: ChatMessage[];
  #busy = false;

  constructor(options: AgentGroupChatOptions, restored?: { messages: ChatMessage[]; channels: ReadonlyMap<string, AgentChannel> }) {
    if (!options?.agents?.length) throw new AgentChatConfigurationError('An AgentGroupChat needs at least one agent.');
    const names = new Set<string>();
    for (const agent of options.agents) {
      if (!agent.name) throw new AgentChatConfigurationError('Every agent in a group chat needs a name: it authors the messages and picks the agent on resume.');
      if (names.has(agent.name)) throw new AgentChatConfigurationError(`Two agents in the chat are named "${agent.name}"; names must be unique.`);
      names.add(agent.name);
    }
    this.agents = [...options.agents];
    this.selection = options.selection ?? new SequentialSelectionStrategy();
    this.termination = options.termination ?? new MaxTurnsTermination(this.agents.length);
    this.maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
    this.#history = [...(restored?.messages ?? [])];
    const providers = [...(options.channelProviders ?? []), ...CORE_CHANNEL_PROVIDERS];
    for (const agent of this.agents) {
      const provider = providers.find((p) => p.supports(agent))!;
      const key = provider.channelKey(agent);
      let channel = this.#channels.get(key);
      if (!channel) {
        channel = restored ? restored.channels.get(key) : provider.createChannel(agent);
        if (!channel) throw new SerializationError('$.channels', `no channel was saved for key "${key}" (agent "${agent.name}"); the chat was written with other agents or settings.`);
        this.#channels.set(key, channel);
      }
      this.#participants.set(agent, { agent, provider, channel });
    }
  }

  /** A chat whose agents, channel providers and registry come from a container. */
  static fromContainer(container: Container, options: AgentGroupChatFromContainerOptions): AgentGroupChat {
    const agents = options.agents.map((a) => (typeof a === 'string' ? container.get(agentToken(a)) : a));
    return new AgentGroupChat({ ...options, agents, ...containerParts(container) });
  }

  /**
   * Resumes a serialized chat (untrusted JSON), in this or another process: agents by name from
   * the container (or `options.agents`), each channel read back by the provider of its `$type`.
   */
  static async deserialize(input: unknown, options: AgentGroupChatResumeOptions = {}): Promise<AgentGroupChat> {
    const fromContainer = options.container ? containerParts(options.container) : { channelProviders: [], serializationRegistry: undefined };
    const registry = options.serializationRegistry ?? fromContainer.serializationRegistry ?? SerializationRegistryImpl.withDefaults();
    const providers = [...(options.channelProviders ?? fromContainer.channelProviders), ...CORE_CHANNEL_PROVIDERS];
    assertUntrustedJson(input, registry.limits);
    const shape = checkShape(input, '$', {
      required: { $type: 'string', version: 'number', agents: 'array', messages: 'array', channels: 'array' },
    });
    registerChatStateTypes(registry, providers);
    registry.checkStateType(CHAT_STATE_KIND, shape.$type, shape.version, '$');
    const names = (shape.agents as unknown[]).map((n, i) => {
      if (typeof n !== 'string' || n === '') throw new SerializationError(`$.agents[${i}]`, `expected an agent name, found ${describe(n)}.`);
      return n;
    });
    const agents = names.map((name, i) => resolveAgent(name, i, options));
    const byName = new Map(agents.map((a) => [a.name!, a]));
    const messages = registry.readMessages(shape.messages, '$.messages');
    const channels = new Map<string, AgentChannel>();
    const list = shape.channels as unknown[];
    for (let i = 0; i < list.length; i++) {
      const path = `$.channels[${i}]`;
      const envelope = readChannelEnvelope(list[i], path);
      const type = envelope.$type;
      registry.checkStateType(CHANNEL_STATE_KIND, type, envelope.version, path);
      const provider = providers.find((p) => p.channelTypes.includes(type))!;
      const agent = byName.get(envelope.agent);
      if (!agent) throw new SerializationError(`${path}.agent`, `the channel names agent "${envelope.agent}", which is not in the chat (${names.join(', ')}).`);
      const current = providers.find((p) => p.supports(agent))!;
      const key = current.channelKey(agent);
      if (key !== envelope.key) {
        throw new SerializationError(`${path}.key`, `agent "${agent.name}" now uses channel "${key}", but the chat was saved with "${envelope.key}"; its configuration changed since.`);
      }
      channels.set(key, await provider.restoreChannel(envelope, agent, { registry, path }));
    }
    return new AgentGroupChat({ ...options, agents, channelProviders: providers.slice(0, providers.length - CORE_CHANNEL_PROVIDERS.length), serializationRegistry: registry }, { messages, channels });
  }

  /** True while an invocation runs. */
  get isBusy(): boolean {
    return this.#busy;
  }

  /** The channel key an agent of the chat uses (agents with equal keys share history). */
  channelKey(agent: AIAgent): string {
    return this.#participant(agent).channel.key;
  }

  addChatMessage(message: ChatMessage | string): Promise<void> {
    return this.addChatMessages(toMessages(message));
  }

  /** Adds messages (the user's, usually) to the chat: every channel receives them. */
  async addChatMessages(input: AgentInput): Promise<void> {
    this.#assertIdle('add messages');
    const now = new Date().toISOString();
    const messages = toMessages(input).map((m) => {
      if (m.role === 'tool') throw new TypeError('A group chat takes user, assistant or system messages; tool messages belong to the agent that called the tool.');
      return m.createdAt ? m : { ...m, createdAt: now };
    });
    this.#history.push(...messages);
    for (const channel of this.#channels.values()) await channel.receive(messages);
  }

  /**
   * Runs turns until the termination strategy (or `maxTurns`) stops it and returns every
   * message the agents produced, each tagged with its `authorName`.
   */
  async invoke(options: AgentGroupChatInvokeOptions = {}): Promise<ChatMessage[]> {
    const release = this.#acquire();
    try {
      const produced: ChatMessage[] = [];
      await this.#loop(options, async (agent, participant, signal) => {
        const messages = await participant.channel.invoke(agent, { signal });
        produced.push(...messages);
        return messages;
      }, options.signal);
      return produced;
    } finally {
      release();
    }
  }

  /**
   * The same as a cold Observable of every agent's updates, tagged with the author and turn.
   * Unsubscribing aborts the running turn and frees the chat at once: the turn adds nothing to
   * the chat or to other channels, its input stays owed to its channel (sent exactly once later),
   * and only its own service thread may keep what the service wrote before the run was cancelled.
   */
  invokeStream(options: AgentGroupChatInvokeOptions = {}): Observable<AgentChatUpdate> {
    return new RxObservable<AgentChatUpdate>((subscriber) => {
      let release: () => void;
      try {
        release = this.#acquire();
      } catch (error) {
        subscriber.error(error);
        return undefined;
      }
      const controller = new AbortController();
      const unlink = linkSignal(options.signal, controller);
      let inner: Subscription | undefined;
      let failCurrent: ((error: unknown) => void) | undefined;
      this.#loop(
        options,
        (agent, participant, signal, turn) =>
          new Promise<ChatMessage[]>((resolve, reject) => {
            let produced: ChatMessage[] = [];
            failCurrent = reject;
            inner = participant.channel.invokeStream(agent, { signal, onProduced: (m) => (produced = m) }).subscribe({
              next: (update) => subscriber.next({ ...update, authorName: update.authorName ?? agent.name!, turn }),
              error: (error: unknown) => {
                failCurrent = undefined;
                reject(error);
              },
              complete: () => {
                failCurrent = undefined;
                resolve(produced);
              },
            });
          }),
        controller.signal,
      )
        .then(
          () => subscriber.complete(),
          (error: unknown) => {
            if (!subscriber.closed) subscriber.error(error);
          },
        )
        .finally(() => {
          unlink();
          release();
        });
      return () => {
        controller.abort(new AbortError('The chat stream was unsubscribed; the running turn was discarded.'));
        inner?.unsubscribe();
        if (failCurrent) {
          failCurrent(new AbortError('The chat stream was unsubscribed; the running turn was discarded.'));
          // A discarded turn commits nothing, so the chat is free at once: the caller may go on
          // right after unsubscribing (the agent's own run winds down behind its thread lock).
          release();
        }
      };
    });
  }

  /** The whole chat; with an agent, what that agent's channel holds (read from the service for service channels). */
  async getChatMessages(agent?: AIAgent, options: { signal?: AbortSignal } = {}): Promise<ChatMessage[]> {
    if (agent === undefined) return [...this.#history];
    return this.#participant(agent).channel.getHistory(options);
  }

  /** Clears the chat and every channel; service threads the channels made are deleted. */
  async reset(): Promise<void> {
    const release = this.#acquire();
    try {
      const failures: unknown[] = [];
      for (const channel of this.#channels.values()) await channel.reset().catch((e: unknown) => failures.push(e));
      this.#history = [];
      if (failures.length === 1) throw failures[0];
      if (failures.length > 1) throw new AggregateError(failures, `${failures.length} channels failed to reset.`);
    } finally {
      release();
    }
  }

  /** Plain JSON: the chat's messages and each channel's state (its messages, or its service thread ids). */
  async serialize(): Promise<SerializedAgentGroupChat> {
    const release = this.#acquire();
    try {
      const channels: SerializedChannel[] = [];
      for (const channel of this.#channels.values()) channels.push(await channel.serialize());
      return { $type: AGENT_GROUP_CHAT_TYPE, version: AGENT_GROUP_CHAT_VERSION, agents: this.agents.map((a) => a.name!), messages: [...this.#history], channels };
    } finally {
      release();
    }
  }

  async #loop(
    options: AgentGroupChatInvokeOptions,
    runTurn: (agent: AIAgent, participant: Participant, signal: AbortSignal | undefined, turn: number) => Promise<ChatMessage[]>,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    for (let turn = 1; ; turn++) {
      throwIfAborted(signal);
      const agent = options.agent ?? (await this.selection.next({ agents: this.agents, history: this.#history, turn, signal }));
      throwIfAborted(signal);
      const participant = this.#participant(agent);
      const produced = await runTurn(agent, participant, signal, turn);
      throwIfAborted(signal);
      await this.#commit(participant, produced);
      if (options.agent || turn >= this.maxTurns) return;
      if (await this.termination.shouldTerminate({ agent, produced, history: this.#history, turn, signal })) return;
    }
  }

  /** The turn's messages join the chat; the other channels receive what may be shared. */
  async #commit(participant: Participant, produced: ChatMessage[]): Promise<void> {
    this.#history.push(...produced);
    const shared = shareableMessages(produced);
    if (shared.length === 0) return;
    for (const channel of this.#channels.values()) if (channel !== participant.channel) await channel.receive(shared);
  }

  #participant(agent: AIAgent): Participant {
    const found = this.#participants.get(agent);
    if (!found) throw new AgentChatConfigurationError(`Agent "${agent.name}" is not part of this chat (${this.agents.map((a) => a.name).join(', ')}).`);
    return found;
  }

  #acquire(): () => void {
    this.#assertIdle('start another invocation');
    this.#busy = true;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#busy = false;
    };
  }

  #assertIdle(what: string): void {
    if (this.#busy) {
      throw new ChatBusyError(`The group chat is already running an invocation; wait for it to finish before you ${what}. A chat runs one invocation at a time.`);
    }
  }
}

const CHAT_STATE_KIND = 'group chat';
const CHANNEL_STATE_KIND = 'channel';

/** The discriminators a chat and its channels are read back by, declared in the registry. */
function registerChatStateTypes(registry: SerializationRegistry, providers: readonly ChannelProvider[]): void {
  registry.registerStateType(CHAT_STATE_KIND, AGENT_GROUP_CHAT_TYPE, [AGENT_GROUP_CHAT_VERSION]);
  for (const provider of providers) for (const type of provider.channelTypes) registry.registerStateType(CHANNEL_STATE_KIND, type, [1]);
}

function containerParts(container: Container): { channelProviders: ChannelProvider[]; serializationRegistry: SerializationRegistry | undefined } {
  return {
    channelProviders: container.getAll<ChannelProvider>(ChannelProvider, { optional: true }),
    serializationRegistry: container.get<SerializationRegistry>(SerializationRegistry, { optional: true }),
  };
}

function resolveAgent(name: string, index: number, options: AgentGroupChatResumeOptions): AIAgent {
  const given = options.agents?.find((a) => a.name === name);
  if (given) return given;
  const fromContainer = options.container?.get(agentToken(name), { optional: true });
  if (fromContainer) return fromContainer;
  throw new SerializationError(`$.agents[${index}]`, `agent "${name}" is neither in options.agents nor bound in the container (agentToken("${name}")).`);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortError('The chat invocation was aborted; the running turn was discarded.', { cause: signal.reason });
}

/** Checks the fields every channel has; the provider of its `$type` checks the rest. */
function readChannelEnvelope(value: unknown, path: string): SerializedChannel {
  const obj = expectObject(value, path);
  const spec = { $type: 'string', version: 'number', key: 'string', agent: 'string' } as const;
  for (const [field, type] of Object.entries(spec)) {
    if (typeof obj[field] !== type) throw new SerializationError(`${path}.${field}`, `expected a ${type}, found ${describe(obj[field])}.`);
  }
  return obj as SerializedChannel;
}
