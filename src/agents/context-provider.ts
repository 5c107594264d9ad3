import type { ChatMessage } from '../messages/chat-message.js';
import type { JsonObject } from '../serialization/json.js';
import type { AgentThread } from '../threads/agent-thread.js';
import type { AITool } from '../tools/ai-tool.js';

/** What a context provider adds to one run; nothing of it is stored in the thread. */
export interface AIContext {
  instructions?: string;
  messages?: ChatMessage[];
  tools?: AITool[];
}

export interface ContextInvokingArgs {
  thread: AgentThread;
  input: readonly ChatMessage[];
  /** This provider's state from the thread (undefined on a new thread). */
  state: JsonObject | undefined;
}

export interface ContextInvokedArgs extends ContextInvokingArgs {
  response?: readonly ChatMessage[];
  error?: unknown;
}

/**
 * Memory and context: called before a run (may add instructions, messages, tools) and after it
 * (sees the input and the response or error). The state it returns from `invoked` is kept in
 * the thread under its `id` and survives serialize/resume; after a failed run it is not kept.
 */
export const ContextProvider = Symbol('ContextProvider');
export interface ContextProvider {
  readonly id: string;
  invoking(args: ContextInvokingArgs): Promise<AIContext | undefined> | AIContext | undefined;
  invoked?(args: ContextInvokedArgs): Promise<JsonObject | undefined> | JsonObject | undefined;
}

const STATE_KEY = 'context';

export function providerState(thread: AgentThread, id: string): JsonObject | undefined {
  const all = thread.state[STATE_KEY];
  if (!all || typeof all !== 'object' || Array.isArray(all)) return undefined;
  const own = (all as JsonObject)[id];
  return own && typeof own === 'object' && !Array.isArray(own) ? (own as JsonObject) : undefined;
}

/** The thread state with `id`'s provider state replaced (a new object; the thread is not touched). */
export function withProviderState(state: JsonObject, id: string, value: JsonObject): JsonObject {
  const all = state[STATE_KEY] && typeof state[STATE_KEY] === 'object' && !Array.isArray(state[STATE_KEY]) ? (state[STATE_KEY] as JsonObject) : {};
  return { ...state, [STATE_KEY]: { ...all, [id]: value } };
}
