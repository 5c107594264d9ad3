import type { DurableAgentOptions } from '../durable/durable-runner.js';
import type { Container } from 'inversify';
import type { ThreadConcurrency } from '../threads/agent-thread.js';
import type { AITool } from '../tools/ai-tool.js';
import type { SerializationLimits } from '../serialization/untrusted-json.js';
import type { SkeinPlugin } from './skein-plugin.js';

/** One agent in container config. Keys not listed here are passed to the client as provider options. */
export interface AgentConfig {
  /** The client id a loaded plugin provides, e.g. `openai-chat`. */
  client: string;
  model?: string;
  instructions?: string;
  /** Defaults to the config key. */
  name?: string;
  description?: string;
  /** A store id a loaded plugin provides (e.g. `sqlite`); in memory when absent. */
  messageStore?: string;
  /** Names of tools bound in the container (under `AITool`) or given in `SkeinConfig.tools`. */
  tools?: string[];
  temperature?: number;
  maxOutputTokens?: number;
  maxToolIterations?: number;
  concurrency?: ThreadConcurrency;
  /** A failed run on a message-store thread keeps the assistant text that arrived, marked partial. */
  keepPartial?: boolean;
  /**
   * Shrinks the history sent to the model (the stored history is unchanged): the newest
   * `maxMessages`, or the newest turns within `maxTokens` (estimated); tool calls stay with their results.
   * `summarize`: older messages are summarized by the agent's chat client once more than
   * `maxMessages` follow the last summary, keeping the newest `keep` (SummarizingReducer, docs/history.md).
   */
  history?: { maxMessages?: number; maxTokens?: number; summarize?: { maxMessages: number; keep?: number } };
  /**
   * Runs on a durable execution engine a loaded plugin provides (e.g. `{ engine: 'dbos' }` with
   * `dbosPlugin`): resolve `durableAgentToken(name)` for the durable face (docs/durable.md).
   */
  durability?: DurableAgentOptions & { engine: string };
  [providerOption: string]: unknown;
}

export interface SkeinConfig {
  plugins?: SkeinPlugin[];
  agents?: Record<string, AgentConfig>;
  /** Tools agents may name in `agents.<name>.tools`. */
  tools?: AITool[];
  /** A parent container (child containers per tenant or request). */
  parent?: Container;
  serializationLimits?: Partial<SerializationLimits>;
}

export const AGENT_CONFIG_KEYS = new Set([
  'client', 'model', 'instructions', 'name', 'description', 'messageStore', 'tools',
  'temperature', 'maxOutputTokens', 'maxToolIterations', 'concurrency', 'keepPartial', 'history', 'durability',
]);
