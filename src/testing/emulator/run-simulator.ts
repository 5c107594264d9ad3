import type { ModelMessage, ModelTool } from './emulated-model.js';

/**
 * What the Assistants and Foundry Agents emulators share about runs: the statuses that hold a
 * thread, expiry of a run left waiting for tool outputs, the run step object, the model's view
 * of submitted tool rounds and the text deltas of a streamed answer. Each route file keeps only
 * its wire differences (directives, field defaults, event details).
 */
export type Json = Record<string, unknown>;

/** Statuses of a run that still holds its thread (no new messages, no second run). */
export const ACTIVE_RUN_STATUSES = new Set(['queued', 'in_progress', 'requires_action', 'cancelling']);

/** The run fields a step copies and expiry changes. */
export interface RunWire {
  id?: unknown;
  assistant_id?: unknown;
  thread_id?: unknown;
  status?: unknown;
  required_action?: unknown;
}

/** A tool call of a finished round, as the model reads it back; `output` undefined when none was submitted. */
export interface ToolRound {
  id: string;
  name: string;
  arguments: string;
  output: string | undefined;
}

/** Unix seconds, as every timestamp on these wires. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A run waiting for tool outputs past its `expires_at` is `expired` (Assistants run lifecycle:
 * "If the outputs are not provided before the expires_at timestamp passes (roughly 10 mins past
 * creation), the run will move to an expired status"; Foundry runs follow the same semantics).
 * Its in-progress steps expire with it. A run still working is not expired here.
 */
export function expireRunIfDue(run: RunWire, expiresAtMs: number, steps: readonly Json[] = []): void {
  if (run.status !== 'requires_action' || Date.now() < expiresAtMs) return;
  run.status = 'expired';
  run.required_action = null;
  for (const step of steps) {
    if (step.status !== 'in_progress') continue;
    step.status = 'expired';
    step.expired_at = nowSeconds();
  }
}

/** A `thread.run.step` of `run`; `details` is the whole `step_details` (with its `type`). */
export function runStep(id: string, run: RunWire, type: string, details: Json, status: string): Json {
  return {
    id,
    object: 'thread.run.step',
    created_at: nowSeconds(),
    run_id: run.id,
    assistant_id: run.assistant_id,
    thread_id: run.thread_id,
    type,
    status,
    step_details: details,
    last_error: null,
    expired_at: null,
    cancelled_at: null,
    failed_at: null,
    completed_at: status === 'completed' ? nowSeconds() : null,
    metadata: {},
    usage: null,
  };
}

/** The function tools of a run, as the model is offered them. */
export function modelTools(tools: unknown): ModelTool[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter((t): t is { type: 'function'; function: { name: string; description?: string; parameters?: Json } } => isRecord(t) && t.type === 'function' && isRecord(t.function))
    .map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters }));
}

/** One round of tool calls as the model reads it back: the assistant's calls, then each submitted output. */
export function toolRoundMessages(calls: readonly ToolRound[]): ModelMessage[] {
  const out: ModelMessage[] = [{ role: 'assistant', text: '', toolCalls: calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) }];
  for (const c of calls) if (c.output !== undefined) out.push({ role: 'tool', text: c.output, toolCallId: c.id });
  return out;
}

/** The text of a message's text parts, joined. */
export function messageText(message: { content?: unknown }): string {
  return (message.content as { type: string; text?: { value: string } }[]).map((c) => (c.type === 'text' ? (c.text?.value ?? '') : '')).join('');
}

/**
 * Sends `thread.message.delta` events, one per word; an annotation rides on the delta that
 * completes the text it covers. `role` is set on each delta where the service sends it (Foundry).
 * Returns false when the client has gone.
 */
export async function sendTextDeltas(
  send: (event: string, data: unknown) => Promise<boolean>,
  messageId: unknown,
  words: readonly string[],
  annotations: readonly Json[],
  role?: 'assistant',
): Promise<boolean> {
  let offset = 0;
  for (const word of words) {
    const end = offset + word.length;
    const covered = annotations.filter((a) => (a.end_index as number) > offset && (a.end_index as number) <= end);
    offset = end;
    const content = [{ index: 0, type: 'text', text: { value: word, annotations: covered } }];
    const delta = { id: messageId, object: 'thread.message.delta', delta: role ? { role, content } : { content } };
    if (!(await send('thread.message.delta', delta))) return false;
  }
  return true;
}
