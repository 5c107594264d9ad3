import { SkeinError } from '../errors/skein-error.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { FunctionApprovalRequestContent, FunctionApprovalResponseContent, FunctionCallContent, FunctionResultContent } from '../messages/content.js';
import type { JsonObject, JsonValue } from '../serialization/json.js';
import type { AgentThread } from '../threads/agent-thread.js';
import { notRun } from './function-invocation-loop.js';

const STATE_KEY = 'pendingApprovals';
const SURFACED_KEY = 'surfacedApprovals';

/** Calls waiting for the user's approval, kept in the thread state so they survive a resume. */
export function pendingApprovalsOf(thread: AgentThread): FunctionCallContent[] {
  const pending = thread.state[STATE_KEY];
  if (!Array.isArray(pending)) return [];
  return pending.filter(isCall).map((c) => ({ kind: 'function-call', callId: c.callId, name: c.name, arguments: c.arguments }));
}

function isCall(value: JsonValue): value is { callId: string; name: string; arguments: string } {
  return !!value && typeof value === 'object' && !Array.isArray(value) && typeof value.callId === 'string' && typeof value.name === 'string' && typeof value.arguments === 'string';
}

export function withPendingApprovals(state: JsonObject, calls: readonly FunctionCallContent[] | undefined): JsonObject {
  // Nothing pending before or after: the same object (no new state object per run).
  if (!calls?.length && !(STATE_KEY in state)) return state;
  const { [STATE_KEY]: _old, ...rest } = state;
  if (!calls?.length) return rest;
  return { ...rest, [STATE_KEY]: calls.map((c) => ({ callId: c.callId, name: c.name, arguments: c.arguments })) };
}

export function approvalRequestsFor(calls: readonly FunctionCallContent[] | undefined): FunctionApprovalRequestContent[] {
  return (calls ?? []).map((c) => ({ kind: 'function-approval-request', callId: c.callId, name: c.name, arguments: c.arguments }));
}

/** The input split into the user's approval answers and everything else (answers removed). */
export function splitApprovalAnswers(input: readonly ChatMessage[]): { answers: Map<string, FunctionApprovalResponseContent>; rest: ChatMessage[] } {
  const { taken, rest } = takeAnswers(input, () => true);
  return { answers: new Map(taken.map((c) => [c.callId, c])), rest };
}

/** The approval answers `wanted` picks, taken out of the input (a message left empty goes). */
function takeAnswers(input: readonly ChatMessage[], wanted: (answer: FunctionApprovalResponseContent) => boolean): { taken: FunctionApprovalResponseContent[]; rest: ChatMessage[] } {
  const taken: FunctionApprovalResponseContent[] = [];
  const rest: ChatMessage[] = [];
  for (const message of input) {
    const others = message.contents.filter((c) => {
      if (c.kind !== 'function-approval-response' || !wanted(c)) return true;
      taken.push(c);
      return false;
    });
    if (others.length === message.contents.length) rest.push(message);
    else if (others.length > 0) rest.push({ ...message, contents: others });
  }
  return { taken, rest };
}

/**
 * Settles the pending calls: approved ones run, rejected or unanswered ones get an error result
 * (a new message means the user moved on; the model must not wait for a call forever).
 */
export async function settlePendingApprovals(
  pending: readonly FunctionCallContent[],
  answers: ReadonlyMap<string, FunctionApprovalResponseContent>,
  run: (call: FunctionCallContent) => Promise<FunctionResultContent>,
): Promise<FunctionResultContent[]> {
  const unknown = [...answers.keys()].filter((id) => !pending.some((c) => c.callId === id));
  if (unknown.length) {
    throw new SkeinError(
      `No pending approval for call ${unknown.join(', ')}; pending: ${pending.map((c) => c.callId).join(', ') || 'none'}. Answer the approvalRequests of the last response on the same thread.`,
    );
  }
  return Promise.all(
    pending.map((call) => {
      const answer = answers.get(call.callId);
      if (answer?.approved) return run(call);
      const why = answer ? `the user rejected this call${answer.reason ? `: ${answer.reason}` : ''}.` : 'the user did not approve this call before sending a new message.';
      return notRun(call, `not run: ${why}`);
    }),
  );
}

/**
 * Approval requests a chat client surfaced in the model's reply (e.g. a service that runs a
 * hosted tool and asks first): the client, not the agent, acts on the answer, which goes to
 * it as a `function-approval-response` in the next turn's input.
 */
export function surfacedApprovalsIn(messages: readonly ChatMessage[]): FunctionApprovalRequestContent[] {
  return messages.flatMap((m) => m.contents.filter((c): c is FunctionApprovalRequestContent => c.kind === 'function-approval-request'));
}

/** The call ids of the surfaced requests the last turn left unanswered. */
export function surfacedApprovalsOf(thread: AgentThread): Set<string> {
  return new Set(surfacedEntries(thread).map((entry) => (typeof entry === 'string' ? entry : entry.callId)));
}

/**
 * Every call waiting for the user's answer on the thread: the agent's own tools that need
 * approval, then the requests a chat client surfaced (a hosted MCP tool). What a CLI or page
 * shows on resume and checks an answer against; the agent itself keeps the two apart.
 */
export function waitingApprovalsOf(thread: AgentThread): FunctionCallContent[] {
  const surfaced = surfacedEntries(thread).map((entry): FunctionCallContent =>
    typeof entry === 'string'
      ? { kind: 'function-call', callId: entry, name: '(hosted tool)', arguments: '' } // written before names were kept
      : { kind: 'function-call', callId: entry.callId, name: entry.name, arguments: entry.arguments },
  );
  return [...pendingApprovalsOf(thread), ...surfaced];
}

function surfacedEntries(thread: AgentThread): (string | { callId: string; name: string; arguments: string })[] {
  const entries = thread.state[SURFACED_KEY];
  return Array.isArray(entries) ? entries.filter((e): e is string | { callId: string; name: string; arguments: string } => typeof e === 'string' || isCall(e)) : [];
}

export function withSurfacedApprovals(state: JsonObject, requests: readonly FunctionApprovalRequestContent[]): JsonObject {
  if (!requests.length && !(SURFACED_KEY in state)) return state;
  const { [SURFACED_KEY]: _old, ...rest } = state;
  return requests.length ? { ...rest, [SURFACED_KEY]: requests.map((r) => ({ callId: r.callId, name: r.name, arguments: r.arguments })) } : rest;
}

/** The answers to surfaced requests, taken out of the input as one user message for the chat client. */
export function takeSurfacedAnswers(input: readonly ChatMessage[], surfaced: ReadonlySet<string>): { forClient?: ChatMessage; rest: ChatMessage[] } {
  if (surfaced.size === 0) return { rest: [...input] };
  const { taken, rest } = takeAnswers(input, (answer) => surfaced.has(answer.callId));
  return taken.length ? { forClient: { role: 'user', contents: taken, createdAt: new Date().toISOString() }, rest } : { rest };
}
