import type { ChatClient } from '../clients/chat-client.js';
import type { ChatOptions } from '../clients/chat-options.js';
import type { ChatMessage } from '../messages/chat-message.js';
import { isFunctionCall, isFunctionResult } from '../messages/content.js';
import type { AgentThread } from './agent-thread.js';

/** What the agent gives a reducer besides the history: the thread (for state a reducer keeps) and its chat client. */
export interface ChatReducerContext {
  thread?: AgentThread;
  /** The agent's chat client, for reducers that call a model (SummarizingReducer). */
  chatClient?: ChatClient;
  /** The agent's default chat options (its model and provider options), for calls made on its client. */
  chatOptions?: ChatOptions;
  signal?: AbortSignal;
}

/**
 * Shrinks a history before it is sent to the model. Applied when history is read (by the agent's
 * `chatReducer` or a store's `reducer` option); the stored history itself is never changed.
 * A reducer returns a suffix-preserving selection and must never split a function call from its
 * result.
 */
export const ChatReducer = Symbol('ChatReducer');
export interface ChatReducer {
  reduce(messages: ChatMessage[], context?: ChatReducerContext): ChatMessage[] | Promise<ChatMessage[]>;
}

/**
 * Splits a history into units that must be kept or dropped together: a message with function
 * calls plus the following messages that carry their results. Leading system messages are
 * returned apart, since they hold the instructions and are always kept.
 */
export function groupToolTurns(messages: readonly ChatMessage[]): { system: ChatMessage[]; units: ChatMessage[][] } {
  let start = 0;
  while (start < messages.length && messages[start]!.role === 'system') start++;
  const system = messages.slice(0, start);
  const units: ChatMessage[][] = [];
  // While a call is unanswered, everything up to its last result belongs to its unit; a user
  // message always starts a new unit, so a call that never got a result cannot swallow the rest.
  const open = new Set<string>();
  for (let i = start; i < messages.length; i++) {
    const message = messages[i]!;
    if (open.size > 0 && message.role !== 'user' && message.role !== 'system' && units.length > 0) {
      units[units.length - 1]!.push(message);
    } else {
      units.push([message]);
      open.clear();
    }
    for (const c of message.contents) {
      if (isFunctionCall(c)) open.add(c.callId);
      else if (isFunctionResult(c)) open.delete(c.callId);
    }
  }
  // Results whose call is not in the history (e.g. trimmed by a store's maxMessages) would be
  // orphan answers the model APIs reject, so they are dropped.
  while (units.length > 0 && isResultsOnly(units[0]![0]!)) units.shift();
  return { system, units };
}

function isResultsOnly(message: ChatMessage): boolean {
  return message.contents.length > 0 && message.contents.every(isFunctionResult);
}

/** Keeps the newest whole units that fit `fits`, always at least the newest unit. */
function keepNewest(messages: ChatMessage[], cost: (m: ChatMessage) => number, budget: number): ChatMessage[] {
  const { system, units } = groupToolTurns(messages);
  let used = system.reduce((sum, m) => sum + cost(m), 0);
  const kept: ChatMessage[][] = [];
  for (let i = units.length - 1; i >= 0; i--) {
    const unit = units[i]!;
    const unitCost = unit.reduce((sum, m) => sum + cost(m), 0);
    if (kept.length > 0 && used + unitCost > budget) break;
    kept.unshift(unit);
    used += unitCost;
  }
  return [...system, ...kept.flat()];
}

/**
 * Keeps at most `maxMessages` messages: the leading system messages and the newest turns. A
 * function call and its results stay together, so the result may hold fewer messages (or, when
 * the newest call/result group alone is larger, that group).
 */
export class MessageCountReducer implements ChatReducer {
  constructor(readonly maxMessages: number) {
    if (!Number.isInteger(maxMessages) || maxMessages < 1) throw new RangeError(`maxMessages must be a positive integer, found ${maxMessages}.`);
  }

  reduce(messages: ChatMessage[]): ChatMessage[] {
    return keepNewest(messages, () => 1, this.maxMessages);
  }
}

export interface TokenBudgetReducerOptions {
  /** Most tokens the reduced history may hold. */
  maxTokens: number;
  /** Counts a message's tokens; by default about 4 characters of its JSON per token. */
  countTokens?: (message: ChatMessage) => number;
}

/** A rough, tokenizer-free estimate: about 4 characters per token, plus a small per-message overhead. */
export function estimateTokens(message: ChatMessage): number {
  return Math.ceil(JSON.stringify(message.contents).length / 4) + 4;
}

/**
 * Keeps the leading system messages and the newest turns whose token count fits `maxTokens`;
 * never splits a function call from its results.
 */
export class TokenBudgetReducer implements ChatReducer {
  readonly maxTokens: number;
  readonly #count: (message: ChatMessage) => number;

  constructor(options: TokenBudgetReducerOptions) {
    if (!(options.maxTokens > 0)) throw new RangeError(`maxTokens must be positive, found ${options.maxTokens}.`);
    this.maxTokens = options.maxTokens;
    this.#count = options.countTokens ?? estimateTokens;
  }

  reduce(messages: ChatMessage[]): ChatMessage[] {
    return keepNewest(messages, this.#count, this.maxTokens);
  }
}
