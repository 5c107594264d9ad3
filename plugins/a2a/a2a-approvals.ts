import type { Message, Part } from '@a2a-js/sdk';
import type { AIContent, ChatMessage, FunctionApprovalRequestContent, FunctionApprovalResponseContent } from 'skein';
import { fromA2AMessage, partsText, textPart } from './a2a-mapping.js';

/** The `type` of the data part an input-required status carries when tool calls wait for approval. */
export const A2A_APPROVAL_REQUEST_TYPE = 'skein.approval-request';

/** One call's answer in the data-part form: `{ "approvals": [{ "callId": "c1", "approved": true }] }`. */
export interface A2AApprovalAnswer {
  callId: string;
  approved: boolean;
  reason?: string;
}

/**
 * The input-required status message for calls waiting for approval: a text a person can read
 * and answer (`approve` / `reject <reason>`), and a data part a program can read
 * (`{ type: "skein.approval-request", calls: [{ callId, name, arguments }] }`).
 */
export function approvalRequestParts(requests: readonly FunctionApprovalRequestContent[]): Part[] {
  const lines = requests.map((r) => `- ${r.name}(${r.arguments}) [call ${r.callId}]`);
  const text =
    `Approval needed before running:\n${lines.join('\n')}\n` +
    'Reply "approve" or "reject" (optionally followed by a reason), for all of them; or send a data part ' +
    '{"approvals":[{"callId":"…","approved":true|false,"reason":"…"}]} to answer each call.';
  const calls = requests.map((r) => ({ callId: r.callId, name: r.name, arguments: r.arguments }));
  return [textPart(text), { content: { $case: 'data', value: { type: A2A_APPROVAL_REQUEST_TYPE, calls } }, metadata: undefined, filename: '', mediaType: 'application/json' }];
}

/** The calls an input-required status message asks approval for (none when it asked something else). */
export function pendingCallIds(message: Message | undefined): string[] {
  for (const part of message?.parts ?? []) {
    const value = part.content?.$case === 'data' ? (part.content.value as { type?: unknown; calls?: unknown }) : undefined;
    if (value?.type === A2A_APPROVAL_REQUEST_TYPE && Array.isArray(value.calls)) {
      return value.calls.map((c: { callId?: unknown }) => c?.callId).filter((id): id is string => typeof id === 'string');
    }
  }
  return [];
}

const APPROVE = /^\s*(approve|approved|yes|y|ok)\s*[.!]?\s*$/i;
const REJECT = /^\s*(reject|rejected|deny|denied|no|n)\b[\s:,.-]*(.*)$/is;

/**
 * The caller's answer to pending approvals as the Skein input: a data part `{ approvals: [...] }`
 * answers per call; a text that is just "approve"/"yes" or starts with "reject"/"no" answers all
 * of them. Anything else is an ordinary message (the agent then runs none of the pending calls).
 */
export function approvalInput(message: Message, pending: readonly string[]): ChatMessage {
  const input = fromA2AMessage(message);
  if (pending.length === 0) return input;
  const answers = dataAnswers(message.parts, pending);
  if (answers) {
    const rest = message.parts.filter((p) => !isApprovalsPart(p));
    const contents = [...answers, ...fromA2AMessage({ ...message, parts: rest }).contents];
    return { ...input, contents };
  }
  const text = partsText(message.parts);
  const rejected = REJECT.exec(text);
  if (APPROVE.test(text) || rejected) {
    const reason = rejected?.[2]?.trim() || undefined;
    return { ...input, contents: pending.map((callId) => response(callId, !rejected, reason)) };
  }
  return input;
}

function dataAnswers(parts: readonly Part[], pending: readonly string[]): FunctionApprovalResponseContent[] | undefined {
  const part = parts.find(isApprovalsPart);
  if (!part || part.content?.$case !== 'data') return undefined;
  const answers = (part.content.value as { approvals: unknown[] }).approvals;
  return answers
    .filter((a): a is A2AApprovalAnswer => typeof (a as A2AApprovalAnswer)?.callId === 'string' && typeof (a as A2AApprovalAnswer).approved === 'boolean')
    .filter((a) => pending.includes(a.callId))
    .map((a) => response(a.callId, a.approved, typeof a.reason === 'string' ? a.reason : undefined));
}

function isApprovalsPart(part: Part): boolean {
  return part.content?.$case === 'data' && Array.isArray((part.content.value as { approvals?: unknown } | undefined)?.approvals);
}

function response(callId: string, approved: boolean, reason: string | undefined): FunctionApprovalResponseContent {
  return reason === undefined ? { kind: 'function-approval-response', callId, approved } : { kind: 'function-approval-response', callId, approved, reason };
}

/**
 * Client side: the caller's approval answers (`approvalResponse(...)` contents) as the data part
 * form a Skein A2AServer reads, `{ approvals: [...] }`; other contents pass unchanged.
 */
export function approvalAnswersAsData(input: readonly ChatMessage[]): ChatMessage[] {
  return input.map((message) => {
    const answers = message.contents.filter((c): c is FunctionApprovalResponseContent => c.kind === 'function-approval-response');
    if (answers.length === 0) return message;
    const approvals = answers.map((a) => (a.reason === undefined ? { callId: a.callId, approved: a.approved } : { callId: a.callId, approved: a.approved, reason: a.reason }));
    const data: AIContent = { kind: 'data', data: Buffer.from(JSON.stringify({ approvals })).toString('base64'), mediaType: 'application/json' };
    return { ...message, contents: [...message.contents.filter((c) => c.kind !== 'function-approval-response'), data] };
  });
}

/** Client side: the approval requests a remote Skein server's input-required status carries. */
export function approvalRequestsIn(contents: readonly AIContent[]): FunctionApprovalRequestContent[] {
  for (const c of contents) {
    const json = c.kind === 'data' ? (c.additionalProperties?.json as { type?: unknown; calls?: unknown } | undefined) : undefined;
    if (json?.type !== A2A_APPROVAL_REQUEST_TYPE || !Array.isArray(json.calls)) continue;
    return json.calls
      .filter((call): call is { callId: string; name: string; arguments: string } => typeof call?.callId === 'string' && typeof call.name === 'string' && typeof call.arguments === 'string')
      .map((call) => ({ kind: 'function-approval-request', callId: call.callId, name: call.name, arguments: call.arguments }));
  }
  return [];
}
