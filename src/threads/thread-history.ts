import { HistoryPositionError } from '../errors/skein-error.js';
import type { ChatMessage } from '../messages/chat-message.js';
import { isFunctionCall, isFunctionResult } from '../messages/content.js';
import { isToolResultsMessage } from '../agents/tool-results-note.js';
import type { ChatMessageStore, ChatMessageStoreFactory, StoreCreateContext } from './chat-message-store.js';

/**
 * A position in a thread's history: an index (0 is the oldest message) or a message id (the
 * `messageId` of a message in the history).
 */
export type HistoryPosition = number | string;

export interface GetMessagesOptions {
  /** At most this many messages: the newest ones of the selection (still returned oldest first). */
  limit?: number;
  /** Only messages before this position (exclusive): page backwards with the first index or id of the previous page. */
  before?: HistoryPosition;
  signal?: AbortSignal;
}

export interface ForkThreadOptions {
  /** The last message the fork holds (included). Default: the whole history. */
  at?: HistoryPosition;
  signal?: AbortSignal;
}

/** The index of `position` in `messages`; a typed error naming what exists when it is not there. */
export function indexOfPosition(messages: readonly ChatMessage[], position: HistoryPosition, option: string): number {
  if (typeof position === 'number') {
    if (Number.isInteger(position) && position >= 0 && position < messages.length) return position;
    throw new HistoryPositionError(
      `Expected \`${option}\` to be a message index from 0 to ${messages.length - 1} (the thread holds ${messages.length} messages), found ${position}. ` +
        'Read the history with agent.getMessages(thread) and pass an index or a messageId from it.',
      position,
    );
  }
  if (typeof position === 'string') {
    const index = messages.findIndex((m) => m.messageId === position);
    if (index >= 0) return index;
    throw new HistoryPositionError(
      `Expected \`${option}\` to be the messageId of a message in this thread, found "${position}", which none of its ${messages.length} messages has. ` +
        'Read the history with agent.getMessages(thread) and pass an index or a messageId from it.',
      position,
    );
  }
  throw new HistoryPositionError(`Expected \`${option}\` to be a message index or a messageId, found ${typeof position}.`, String(position));
}

/** `getMessages` paging over a history read oldest first. */
export function pageMessages(messages: ChatMessage[], options: GetMessagesOptions = {}): ChatMessage[] {
  const { limit, before } = options;
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0)) {
    throw new HistoryPositionError(`Expected \`limit\` to be a whole number of messages (0 or more), found ${limit}.`, String(limit));
  }
  let end = messages.length;
  if (before !== undefined) {
    // `before` one past the end is allowed: it means "everything", the natural first page cursor.
    end = typeof before === 'number' && before === messages.length ? before : indexOfPosition(messages, before, 'before');
  }
  const start = limit === undefined ? 0 : Math.max(0, end - limit);
  return start === 0 && end === messages.length ? messages : messages.slice(start, end);
}

/**
 * How many of the oldest `messages` a fork at `at` holds. The cut is moved so the fork is a
 * conversation that can go on:
 * - it never separates a function call from its results: a cut on a call (or between a call and
 *   its results) takes the results too;
 * - it never ends in an unfinished turn: when the turn at the cut waits for approval (calls
 *   without results) or its reply is partial (`additionalProperties.partial`, a failed run with
 *   `keepPartial`), the fork ends before that turn, its input included.
 */
export function forkCount(messages: readonly ChatMessage[], at: HistoryPosition | undefined): number {
  let count = at === undefined ? messages.length : indexOfPosition(messages, at, 'at') + 1;
  const open = new Set<string>();
  const track = (m: ChatMessage) => {
    for (const c of m.contents) {
      if (isFunctionCall(c)) open.add(c.callId);
      else if (isFunctionResult(c)) open.delete(c.callId);
    }
  };
  for (let i = 0; i < count; i++) track(messages[i]!);
  while (open.size > 0 && count < messages.length && messages[count]!.role !== 'user' && messages[count]!.role !== 'system') track(messages[count++]!);
  if (count > 0 && (open.size > 0 || messages[count - 1]!.additionalProperties?.partial === true)) count = turnStart(messages, count - 1);
  return count;
}

/** The index of the user message that started the turn holding message `index` (0 when none did). */
function turnStart(messages: readonly ChatMessage[], index: number): number {
  for (let i = index; i >= 0; i--) if (messages[i]!.role === 'user' && !messages[i]!.contents.every(isFunctionResult)) return i;
  return 0;
}

/**
 * For services that keep runs (Assistants, Foundry): whether a run with this status ended its turn.
 * `completed` and `incomplete` (a reply cut short by a token limit) did; a run waiting for tool
 * outputs or an approval (`requires_action`), still going, cancelled, failed or expired did not.
 */
export function isFinishedRunStatus(status: string): boolean {
  return status === 'completed' || status === 'incomplete';
}

/**
 * Where the unfinished turn of a run-keeping service thread starts, given its history oldest
 * first and the ids of the messages its newest (unfinished) run wrote. Those services list only
 * messages (the calls a run waits on are run steps, not messages), so `forkCount` cannot see the
 * turn: it is everything after the last reply that run did not write — the input sent since
 * (with the run or before it) and what the run wrote. A fork holds at most this many messages.
 * The calls read from a tool results note are not a reply: the note is that turn's input.
 */
export function unfinishedTurnStart(messages: readonly ChatMessage[], writtenByRun: ReadonlySet<string>): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant' && !isToolResultsMessage(m) && !(m.messageId !== undefined && writtenByRun.has(m.messageId))) return i + 1;
  }
  return 0;
}

/**
 * A new, independent store holding the first `count` of `messages` (the store's history as just
 * read). A store with its own `fork` copies on its side (one round trip for the database
 * stores); any other store (a third-party one built on the contract) gets a new store from
 * `factory` and one `addMessages` with the copies.
 */
export async function forkMessageStore(
  store: ChatMessageStore,
  messages: readonly ChatMessage[],
  count: number,
  factory: ChatMessageStoreFactory,
  context: StoreCreateContext,
): Promise<ChatMessageStore> {
  if (store.fork) return store.fork(count);
  const copy = factory.create(context);
  if (count > 0) await copy.addMessages(messages.slice(0, count));
  return copy;
}
