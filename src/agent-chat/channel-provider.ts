import type { AIAgent } from '../agents/ai-agent.js';
import type { SerializationRegistry } from '../serialization/serialization-registry.js';
import type { AgentChannel, SerializedChannel } from './agent-channel.js';

export interface ChannelRestoreContext {
  registry: SerializationRegistry;
  /** Where the channel sits in the serialized chat, e.g. `$.channels[1]`. */
  path: string;
}

/**
 * Supplies the channels of one kind of agent. Each plugin contributes one (bound under
 * `ChannelProvider`, collected with getAll); the core adds fallbacks for message-store
 * ChatAgents and for any other agent. The first provider that `supports` an agent is used.
 */
export const ChannelProvider = Symbol('ChannelProvider');
export interface ChannelProvider {
  /** The `$type`s of the channels it writes and reads back. */
  readonly channelTypes: readonly string[];
  supports(agent: AIAgent): boolean;
  /**
   * Agents with equal keys share a channel. Keys are stable across processes and never
   * contain a secret (hash an API key if identity needs it).
   */
  channelKey(agent: AIAgent): string;
  createChannel(agent: AIAgent): AgentChannel;
  /** Reads a channel back (its envelope was checked); `agent` is the one it names. */
  restoreChannel(serialized: SerializedChannel, agent: AIAgent, context: ChannelRestoreContext): Promise<AgentChannel>;
}
