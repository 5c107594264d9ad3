import type { Observable } from 'rxjs';
import type { AIAgent } from '../agents/ai-agent.js';
import type { AgentRunResponseUpdate } from '../agents/agent-run-response.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { JsonObject } from '../serialization/json.js';

/** The plain-JSON form of a channel. `$type` picks the ChannelProvider that reads it back. */
export interface SerializedChannel extends JsonObject {
  $type: string;
  version: number;
  /** The channel key at the time it was written; a resumed chat checks it still matches. */
  key: string;
  /** The agent (by name) whose provider restores the channel. */
  agent: string;
}

export interface ChannelInvokeOptions {
  signal?: AbortSignal;
  /** Called by `invokeStream` with the turn's messages once the channel committed them, before it completes. */
  onProduced?: (messages: ChatMessage[]) => void;
}

/**
 * One shared history of a group chat, kept in the threading model of the agents that use it:
 * local messages for message-store agents, a service thread for service agents. Agents whose
 * channel keys match share one channel. A channel is not re-entrant: the group chat runs one
 * turn at a time.
 */
export const AgentChannel = Symbol('AgentChannel');
export interface AgentChannel {
  /** Agents whose `channelKey` equals this share the channel. */
  readonly key: string;
  /** The `$type` this channel serializes as. */
  readonly type: string;
  /** Messages other channels' agents (or the user) produced; the channel's agents see them on their next turn. */
  receive(messages: readonly ChatMessage[]): Promise<void>;
  /**
   * Runs `agent` on the shared history and returns what it produced (authored by it). A failed
   * run leaves the channel as it was.
   */
  invoke(agent: AIAgent, options?: ChannelInvokeOptions): Promise<ChatMessage[]>;
  /** The same turn streamed; the produced messages go to `options.onProduced` before completion. */
  invokeStream(agent: AIAgent, options?: ChannelInvokeOptions): Observable<AgentRunResponseUpdate>;
  /** What this channel holds, oldest first (a service channel reads it from the service). */
  getHistory(options?: ChannelInvokeOptions): Promise<ChatMessage[]>;
  /** Forgets the history; a service channel deletes the service thread it created. */
  reset(): Promise<void>;
  serialize(): Promise<SerializedChannel>;
}
