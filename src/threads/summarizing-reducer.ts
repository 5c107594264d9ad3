import { createHash } from 'node:crypto';
import type { ChatClient } from '../clients/chat-client.js';
import type { ChatOptions } from '../clients/chat-options.js';
import { type ChatMessage, messageText } from '../messages/chat-message.js';
import { isFunctionCall, isFunctionResult } from '../messages/content.js';
import { functionResultText } from '../messages/content.js';
import type { JsonObject } from '../serialization/json.js';
import { type ChatReducer, type ChatReducerContext, MessageCountReducer } from './chat-reducer.js';

export interface SummarizingReducerOptions {
  /** Summarize when more than this many messages follow the summary (or the start). */
  maxMessages: number;
  /** Messages kept word for word after a summarization (the newest; whole tool exchanges). Default half of maxMessages. */
  keep?: number;
  /** The client that writes summaries; default the agent's. */
  chatClient?: ChatClient;
  /** Options of the summarization call (e.g. a cheaper `model`). */
  chatOptions?: ChatOptions;
  /** What the summarizer is told to do. */
  instructions?: string;
  /** Longest summary kept, in characters (a longer one is cut); also asked of the model as maxOutputTokens. Default 4000. */
  maxSummaryChars?: number;
}

/** The thread state key of the summary (so it survives serialize/resume and is not recomputed per turn). */
export const HISTORY_SUMMARY_STATE = 'historySummary';

/** What `thread.state.historySummary` holds. */
export interface HistorySummaryState {
  text: string;
  /** How many of the oldest stored messages the summary covers. */
  covers: number;
  /** A fingerprint of the last covered message: a history that changed under the summary (a fork, trimming) is summarized again. */
  last: string;
}

const DEFAULT_INSTRUCTIONS =
  'Summarize the conversation below for the assistant that continues it: keep names, facts, decisions, open questions and ' +
  'what tools returned. Start from the previous summary when there is one. Answer with the summary only.';

/**
 * Keeps a long history within the context by summarizing its older part. When more than
 * `maxMessages` messages follow the last summary, the older ones (all but the newest `keep`, never
 * splitting a tool call from its results) are folded into the summary by a chat client, at most
 * `maxMessages` at a time, so every request stays bounded however long the thread. The model
 * is sent the leading system messages, the summary as one system message, then the newest
 * messages. The summary and the point it covers are kept in the thread's state
 * (`historySummary`); the stored history is never changed. A failed summarization falls back
 * to a MessageCountReducer(maxMessages) and never fails the turn. Needs the agent's thread: use
 * it as the agent's `chatReducer` (or config `history: { summarize: { maxMessages, keep } }`).
 *
 * @example
 * ```ts
 * const agent = new ChatAgent({ chatClient, chatReducer: new SummarizingReducer({ maxMessages: 40, keep: 10 }) });
 * ```
 */
export class SummarizingReducer implements ChatReducer {
  readonly maxMessages: number;
  readonly keep: number;
  readonly #options: SummarizingReducerOptions;
  readonly #fallback: MessageCountReducer;

  constructor(options: SummarizingReducerOptions) {
    const { maxMessages } = options;
    if (!Number.isInteger(maxMessages) || maxMessages < 2) throw new RangeError(`maxMessages must be an integer of at least 2, found ${maxMessages}.`);
    const keep = options.keep ?? Math.floor(maxMessages / 2);
    if (!Number.isInteger(keep) || keep < 1 || keep >= maxMessages) throw new RangeError(`keep must be an integer from 1 to maxMessages - 1 (${maxMessages - 1}), found ${keep}.`);
    this.maxMessages = maxMessages;
    this.keep = keep;
    this.#options = options;
    this.#fallback = new MessageCountReducer(maxMessages);
  }

  async reduce(messages: ChatMessage[], context: ChatReducerContext = {}): Promise<ChatMessage[]> {
    let system = 0;
    while (system < messages.length && messages[system]!.role === 'system') system++;
    const thread = context.thread;
    const saved = thread ? summaryOf(thread.state, messages, system) : undefined;
    const start = saved?.covers ?? system;
    if (messages.length - start <= this.maxMessages) return saved ? this.#sent(messages, system, saved) : messages;

    const client = this.#options.chatClient ?? context.chatClient;
    const cut = cutBefore(messages, start, messages.length - this.keep);
    if (!client || cut <= start) return this.#fallback.reduce(messages);
    try {
      let summary = saved;
      // Fold the older messages in, at most maxMessages per call: each request stays bounded.
      for (let from = start; from < cut; ) {
        const to = cutBefore(messages, from, Math.min(cut, from + this.maxMessages), cut);
        const text = await this.#summarize(client, summary?.text, messages.slice(from, to), context.signal, this.#options.chatClient ? undefined : context.chatOptions);
        summary = { text, covers: to, last: fingerprint(messages[to - 1]!) };
        from = to;
      }
      if (thread) thread.state = { ...thread.state, [HISTORY_SUMMARY_STATE]: summary as unknown as JsonObject };
      return this.#sent(messages, system, summary!);
    } catch {
      // A summary is an optimisation: the turn goes on with the newest messages.
      return this.#fallback.reduce(messages);
    }
  }

  #sent(messages: ChatMessage[], system: number, summary: HistorySummaryState): ChatMessage[] {
    const note: ChatMessage = { role: 'system', contents: [{ kind: 'text', text: `Summary of the earlier conversation:\n${summary.text}` }] };
    return [...messages.slice(0, system), note, ...messages.slice(summary.covers)];
  }

  async #summarize(client: ChatClient, previous: string | undefined, messages: ChatMessage[], signal: AbortSignal | undefined, defaults: ChatOptions | undefined): Promise<string> {
    const max = this.#options.maxSummaryChars ?? 4000;
    const transcript = messages.map(transcriptLine).join('\n');
    const prompt = `${previous ? `Previous summary:\n${previous}\n\n` : ''}Conversation:\n${transcript}`;
    // The agent's model options (model, provider extras), without its tools: a summary calls none.
    const { tools: _tools, toolChoice: _choice, ...agentOptions } = defaults ?? {};
    const options: ChatOptions = { ...agentOptions, maxOutputTokens: Math.ceil(max / 4), ...this.#options.chatOptions, instructions: this.#options.instructions ?? DEFAULT_INSTRUCTIONS };
    if (signal) options.signal = signal;
    const response = await client.getResponse([{ role: 'user', contents: [{ kind: 'text', text: prompt }] }], options);
    const text = response.messages.map(messageText).join('').trim();
    if (!text) throw new Error('empty summary');
    return text.length > max ? text.slice(0, max) : text;
  }
}

/** The saved summary when it still fits the history (the message it ends on is unchanged). */
function summaryOf(state: JsonObject, messages: readonly ChatMessage[], system: number): HistorySummaryState | undefined {
  const value = state[HISTORY_SUMMARY_STATE] as Partial<HistorySummaryState> | undefined;
  if (!value || typeof value !== 'object' || typeof value.text !== 'string' || typeof value.last !== 'string' || !Number.isInteger(value.covers)) return undefined;
  const covers = value.covers!;
  if (covers <= system || covers > messages.length || fingerprint(messages[covers - 1]!) !== value.last) return undefined;
  return value as HistorySummaryState;
}

/** The thread state without a summary that covers messages a fork (of `count` messages) does not hold. */
export function withoutSummaryBeyond(state: JsonObject, count: number): JsonObject {
  const value = state[HISTORY_SUMMARY_STATE] as { covers?: unknown } | undefined;
  if (!value || (typeof value.covers === 'number' && value.covers <= count)) return state;
  const { [HISTORY_SUMMARY_STATE]: _dropped, ...rest } = state;
  return rest;
}

/**
 * The largest index in (from, target] where the history may be cut: not inside a tool exchange
 * (no call before it waiting for a result at or after it). `limit` caps how far it may look on
 * when no cut exists before `target`. Returns `from` when there is none.
 */
function cutBefore(messages: readonly ChatMessage[], from: number, target: number, limit = target): number {
  const open = new Set<string>();
  let best = from;
  for (let i = from; i < limit; i++) {
    for (const c of messages[i]!.contents) {
      if (isFunctionCall(c)) open.add(c.callId);
      else if (isFunctionResult(c)) open.delete(c.callId);
    }
    const next = messages[i + 1];
    const cuttable = open.size === 0 && !(next && next.contents.length > 0 && next.contents.every(isFunctionResult));
    if (cuttable) {
      if (i + 1 <= target) best = i + 1;
      else if (best === from) return i + 1;
      else break;
    }
  }
  return best;
}

function transcriptLine(message: ChatMessage): string {
  const who = message.authorName ? `${message.role} (${message.authorName})` : message.role;
  const parts = message.contents.flatMap((c) => {
    if (c.kind === 'text') return c.text;
    if (isFunctionCall(c)) return `[called ${c.name}(${c.arguments})]`;
    if (isFunctionResult(c)) return `[result: ${functionResultText(c)}]`;
    // A call the service made on a hosted MCP server reads like a call and its result; its tool listing is not conversation.
    if (c.kind === 'hosted-mcp-call') return `[called ${c.serverLabel}/${c.name}(${c.arguments})] [result: ${c.error !== undefined ? `Error: ${c.error}` : (c.result ?? '')}]`;
    if (c.kind === 'hosted-mcp-tools') return [];
    return `[${c.kind}]`;
  });
  return `${who}: ${parts.join(' ')}`;
}

function fingerprint(message: ChatMessage): string {
  return createHash('sha256').update(JSON.stringify(message)).digest('base64url').slice(0, 16);
}
