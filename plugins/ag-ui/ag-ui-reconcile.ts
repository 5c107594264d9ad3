import type { Message, ResumeEntry } from '@ag-ui/core';
import type { ChatMessage, FunctionApprovalResponseContent, FunctionCallContent, FunctionResultContent } from 'skein';
import { AgUiRequestError } from './ag-ui-errors.js';
import { fromAgUiMessage, resultFromAgUi } from './ag-ui-messages.js';

/** What the client's `messages` and `resume` ask of the stored thread (see docs/ag-ui.md, "Thread rules"). */
export interface ReconcilePlan {
  /**
   * Set when the client's history left the stored one: the thread forks, keeping the stored
   * messages up to this Skein index (included; -1: none) and the newest branch answers for the threadId.
   */
  forkAt?: number;
  /**
   * Service threads (no Skein indexes here): set when the history left the stored one; the thread
   * forks keeping the first this-many input (user, system) messages' turns whole. The runner
   * finds the Skein index in the service's history.
   */
  forkAfterInputs?: number;
  /** How many messages of the stored view the (possibly forked) thread keeps. */
  kept: number;
  /** New user and system messages, in order. */
  input: ChatMessage[];
  /** Results of waiting frontend tool calls, from the client's tool messages. */
  results: FunctionResultContent[];
  /** Answers to waiting calls from `resume` entries. */
  answers: FunctionApprovalResponseContent[];
}

export interface ReconcileRequest {
  /** The stored history as AG-UI messages. */
  view: readonly Message[];
  /** For each view message, its Skein index; undefined for a service thread (forked at whole turns: `forkAfterInputs`). */
  source?: readonly number[];
  client: readonly Message[];
  resume: readonly ResumeEntry[];
  /** Calls the thread waits on (approval or a frontend tool's result). */
  waiting: readonly FunctionCallContent[];
}

const HISTORY_ROLES = new Set(['user', 'system', 'developer', 'assistant', 'tool']);

/**
 * Compares the client's messages with the stored thread by id:
 * - the stored messages come first, in order, with the same ids: what follows is new;
 * - where the client's history leaves the stored one (an edited or cut history), the thread
 *   forks there: the stored messages before it are kept, the rest of the client's list is new;
 * - a list that is the start of the stored one, empty or ending with a reply, asks for nothing:
 *   it reads the thread (a tab that missed another's turns), never forks it;
 * - new messages may be user, system or developer messages, and tool messages answering a call
 *   the thread waits on; an assistant message, or a tool message for any other call, is refused:
 *   a client never writes the agent's side of the conversation. Activity and reasoning
 *   messages are the client's own and are ignored.
 */
export function reconcile(request: ReconcileRequest): ReconcilePlan {
  const client = request.client.filter((m) => HISTORY_ROLES.has(m.role));
  const ids = new Set<string>();
  for (const m of client) {
    if (ids.has(m.id)) throw new AgUiRequestError(400, `Every message needs its own id; "${m.id}" appears twice in "messages".`);
    ids.add(m.id);
  }
  const { view } = request;
  let k = 0;
  while (k < view.length && k < client.length && sameMessage(view[k]!, client[k]!)) k++;

  let kept = view.length;
  let forkAt: number | undefined;
  let forkAfterInputs: number | undefined;
  // The start of the stored history, ending with a reply (or a result), is a client that missed
  // later turns (another tab ran them): a read, like an empty list. Only a list ending with user
  // messages there asks for something (regenerate).
  const behind = k === client.length && k < view.length && (k === 0 || !isInput(client[k - 1]!));
  if (k < view.length && !behind) {
    // The fork ends with a whole turn: user messages at the cut are sent again as new input.
    kept = k;
    while (kept > 0 && isInput(view[kept - 1]!)) kept--;
    const source = request.source;
    if (!source) {
      // A service thread's history has the service's indexes, read only when forking: it forks at whole turns.
      if (kept < view.length && !isInput(view[kept]!)) {
        throw new AgUiRequestError(
          409,
          `This thread's history is kept by the AI service, which forks at whole turns, and the client's messages leave it inside a turn (at "${view[kept]!.id}"). Cut the history just before or just after a user message (edit-and-retry, regenerate), or start a new threadId.`,
        );
      }
      forkAfterInputs = view.slice(0, kept).filter(isInput).length;
    } else {
      if (kept > 0 && kept < view.length && source[kept] === source[kept - 1]) {
        throw new AgUiRequestError(409, `The client's messages cut the thread between the results of one tool round (at "${view[kept]!.id}"); keep or drop that round whole.`);
      }
      forkAt = kept > 0 ? source[kept - 1]! : -1;
    }
  }

  const plan: ReconcilePlan = { kept, input: [], results: [], answers: [], ...(forkAt !== undefined ? { forkAt } : {}), ...(forkAfterInputs !== undefined ? { forkAfterInputs } : {}) };
  const waiting = isFork(plan) ? [] : request.waiting;
  const fresh = behind ? [] : client.slice(kept);
  for (const m of fresh) {
    if (m.role === 'user' || m.role === 'system' || m.role === 'developer') plan.input.push(fromAgUiMessage(m));
    else if (m.role === 'tool') {
      if (!waiting.some((c) => c.callId === m.toolCallId)) {
        throw new AgUiRequestError(
          400,
          `The tool message "${m.id}" answers call "${m.toolCallId}", which this thread is not waiting on (waiting: ${describe(waiting)}). A client sends results only for the frontend tool calls of the last run.`,
        );
      }
      plan.results.push(resultFromAgUi(m));
    } else {
      throw new AgUiRequestError(
        400,
        `The assistant message "${m.id}" is not in this thread: a client cannot add or rewrite the agent's messages. Send the history as the server sent it, with new user messages (or tool results for frontend tool calls) at the end.`,
      );
    }
  }
  for (const entry of request.resume) {
    if (!waiting.some((c) => c.callId === entry.interruptId)) {
      throw new AgUiRequestError(400, `"resume" answers interrupt "${entry.interruptId}", which this thread is not waiting on (waiting: ${describe(waiting)}).`);
    }
    plan.answers.push(answerOf(entry));
  }
  return plan;
}

/** Whether the plan forks the thread (a store thread at `forkAt`, a service thread after `forkAfterInputs` turns). */
export function isFork(plan: ReconcilePlan): boolean {
  return plan.forkAt !== undefined || plan.forkAfterInputs !== undefined;
}

/** `resolved` approves unless the payload says `false` or `{ approved: false }`; `cancelled` declines. */
function answerOf(entry: ResumeEntry): FunctionApprovalResponseContent {
  const payload = entry.payload as { approved?: unknown; reason?: unknown } | boolean | undefined;
  const declined = entry.status === 'cancelled' || payload === false || (typeof payload === 'object' && payload !== null && payload.approved === false);
  const reason = typeof payload === 'object' && payload !== null && typeof payload.reason === 'string' ? payload.reason : undefined;
  return { kind: 'function-approval-response', callId: entry.interruptId, approved: !declined, ...(reason !== undefined ? { reason } : {}) };
}

export function isInput(m: Message): boolean {
  return m.role === 'user' || m.role === 'system' || m.role === 'developer';
}

/** Same id; for the client's own messages (user, system) also the same text: an edit in place is a branch too. */
function sameMessage(stored: Message, client: Message): boolean {
  if (stored.id !== client.id) return false;
  if (!isInput(stored)) return true;
  return textOf(stored) === textOf(client);
}

function textOf(m: Message): string {
  const content = (m as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((p: { type?: string; text?: string }) => (p.type === 'text' ? (p.text ?? '') : `[${p.type}]`)).join('') : '';
}

function describe(waiting: readonly FunctionCallContent[]): string {
  return waiting.length ? waiting.map((c) => `"${c.callId}" (${c.name})`).join(', ') : 'none';
}
