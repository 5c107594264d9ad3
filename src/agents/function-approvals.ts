import { SkeinError } from '../errors/skein-error.js';
import type { ChatMessage } from '../messages/chat-message.js';
import type { FunctionApprovalRequestContent, FunctionApprovalResponseContent, FunctionCallContent, FunctionResultContent } from '../messages/content.js';
import type { JsonObject, JsonValue } from '../serialization/json.js';
import type { AgentThread } from '../threads/agent-thread.js';
import type { AITool } from '../tools/ai-tool.js';
import { mapPacked } from '../messages/packed-map.js';
import { namingCall, notRun, settledCallOf } from './call-result.js';
import { rejected, runToolCall } from './tool-approval-gate.js';

// Their old home; kept so `skein` and deep imports still find them.
export { namingCall, settledCallOf } from './call-result.js';

const STATE_KEY = 'pendingApprovals';
const SURFACED_KEY = 'surfacedApprovals';
const HELD_KEY = 'heldToolResults';

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
  // Every turn asks, nearly always with none: a packed empty array (see mapPacked).
  return calls?.length ? mapPacked(calls, (c) => ({ kind: 'function-approval-request', callId: c.callId, name: c.name, arguments: c.arguments })) : [];
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
 * Settles the pending calls through the approval gate (`runToolCall`): approved ones run,
 * rejected or unanswered ones get an error result (a new message means the user moved on; the
 * model must not wait for a call forever).
 */
export async function settlePendingApprovals(
  pending: readonly FunctionCallContent[],
  answers: ReadonlyMap<string, FunctionApprovalResponseContent>,
  tools: ReadonlyMap<string, AITool>,
  invoke: (call: FunctionCallContent, tool: AITool) => Promise<FunctionResultContent>,
): Promise<FunctionResultContent[]> {
  const unknown = [...answers.keys()].filter((id) => !pending.some((c) => c.callId === id));
  if (unknown.length) {
    throw new SkeinError(
      `No pending approval for call ${unknown.join(', ')}; pending: ${pending.map((c) => c.callId).join(', ') || 'none'}. Answer the approvalRequests of the last response on the same thread.`,
    );
  }
  return Promise.all(
    pending.map(async (call) => {
      const answer = answers.get(call.callId);
      if (!answer) return namingCall(notRun(call, 'not run: the user did not approve this call before sending a new message.'), call);
      if (!answer.approved) return namingCall(rejected(call, answer), call);
      const tool = tools.get(call.name);
      if (!tool) return namingCall(notRun(call, `unknown tool "${call.name}".`), call);
      return namingCall(await runToolCall({ call, tool, approval: answer, invoke: () => invoke(call, tool) }), call);
    }),
  );
}

/**
 * Settles what the thread waits for with the turn's answers: results already known (held:
 * calls that ran beside the pending ones, or approved calls of a turn that failed on a service
 * thread) are kept as they are, so a tool never runs twice; the other pending calls go through
 * `settlePendingApprovals`. Answers to calls whose result is held are dropped. Used by every agent
 * that keeps pending calls (ChatAgent, the Assistants run processor).
 */
export async function settleThreadApprovals(
  thread: AgentThread,
  answers: Map<string, FunctionApprovalResponseContent>,
  tools: ReadonlyMap<string, AITool>,
  invoke: (call: FunctionCallContent, tool: AITool) => Promise<FunctionResultContent>,
): Promise<{ held: FunctionResultContent[]; settled: FunctionResultContent[] }> {
  const pending = pendingApprovalsOf(thread);
  const held = pending.length ? heldResultsOf(thread) : [];
  const ran = new Set(held.map((r) => r.callId));
  for (const id of ran) answers.delete(id);
  const settled = await settlePendingApprovals(ran.size ? pending.filter((c) => !ran.has(c.callId)) : pending, answers, tools, invoke);
  return { held, settled };
}

/**
 * Results of calls that ran in the turn that stopped for approval (tools that need none), kept
 * until they reach the service with the answered calls' results: a service thread holds no
 * tool message of Skein's own, so without this the model would never read them.
 */
export function heldResultsOf(thread: AgentThread): FunctionResultContent[] {
  const held = thread.state[HELD_KEY];
  if (!Array.isArray(held)) return [];
  return held.filter(isHeldResult).map((r) => {
    const result: FunctionResultContent = { kind: 'function-result', callId: r.callId, ...(r.error !== undefined ? { error: r.error } : { result: r.result ?? null }) };
    return typeof r.name === 'string' ? namingCall(result, { name: r.name, arguments: typeof r.arguments === 'string' ? r.arguments : '' }) : result;
  });
}

function isHeldResult(value: JsonValue): value is { callId: string; result?: JsonValue; error?: string; name?: JsonValue; arguments?: JsonValue } {
  return !!value && typeof value === 'object' && !Array.isArray(value) && typeof value.callId === 'string' && (value.error === undefined || typeof value.error === 'string');
}

export function withHeldResults(state: JsonObject, results: readonly FunctionResultContent[] | undefined): JsonObject {
  if (!results?.length && !(HELD_KEY in state)) return state;
  const { [HELD_KEY]: _old, ...rest } = state;
  if (!results?.length) return rest;
  return {
    ...rest,
    [HELD_KEY]: results.map((r): JsonObject => {
      const call = settledCallOf(r);
      const named: JsonObject = call ? { callId: r.callId, name: call.name, arguments: call.arguments } : { callId: r.callId };
      return r.error !== undefined ? { ...named, error: r.error } : { ...named, result: (r.result ?? null) as JsonValue };
    }),
  };
}

/**
 * Approval requests a chat client surfaced in the model's reply (e.g. a service that runs a
 * hosted tool and asks first): the client, not the agent, acts on the answer, which goes to
 * it as a `function-approval-response` in the next turn's input.
 */
export function surfacedApprovalsIn(messages: readonly ChatMessage[]): FunctionApprovalRequestContent[] {
  // A loop, not flatMap + filter: this runs on every turn, and nearly every turn has none.
  let found: FunctionApprovalRequestContent[] | undefined;
  for (const m of messages) for (const c of m.contents) if (c.kind === 'function-approval-request') (found ??= []).push(c);
  return found ?? [];
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
