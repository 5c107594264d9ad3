import { isToolCallsReply, type ModelMessage, type ModelTextReply, type ModelTool } from './emulated-model.js';
import type { RouteContext, RouteReply } from './router.js';

/**
 * The one run simulator of the Assistants and Foundry Agents emulators: a run's lifecycle
 * (queued -> in_progress -> requires_action / an ending, one step per retrieve), cancelling,
 * submitted tool outputs, expiry, the run step object, the model's view of submitted tool
 * rounds and the SSE skeleton of a run. Each route file gives a `RunWireStrategy` with only its
 * wire differences: steering markers, the model's input, what a turn records (steps, rounds,
 * usage), the failure's text and the events of a settled turn.
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
  started_at?: unknown;
  cancelled_at?: unknown;
  failed_at?: unknown;
  completed_at?: unknown;
  last_error?: unknown;
  incomplete_details?: unknown;
}

/** A run as the simulator moves it; each wire's run adds its own fields. */
export interface SimulatedRun {
  object: RunWire;
  /** Retrieves a run in progress still reports `in_progress` before the model is asked. */
  pollsLeft: number;
  /** Stays `in_progress` until cancelled (a steering marker asked for it). */
  stuck: boolean;
  /** `expires_at` in milliseconds (the wire field is whole seconds). */
  expiresAtMs: number;
  /** Set while a held stream waits for the run to be cancelled. */
  onCancel?: () => void;
}

/** A tool call the run asks for, as `required_action.submit_tool_outputs.tool_calls` lists it. */
export interface RunToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** What one model turn of a run produced, for the stream to show. */
export interface SettledTurn<M> {
  calls?: RunToolCall[];
  message?: M;
}

/** Sends one SSE event; false when the client has gone. */
export type SendEvent = (event: string, data: unknown) => Promise<boolean>;

/** Endings a steering marker can ask for instead of the model's answer. */
export type ScriptedEnding = 'failed' | 'expired' | 'cancelled' | 'incomplete';

/** What differs between the Assistants and Foundry wires; the simulator does the rest. */
export interface RunWireStrategy<T, R extends SimulatedRun, M> {
  /** Cancelling a run waiting for tool outputs ends it at once (Assistants) or goes through `cancelling` (Foundry). */
  readonly cancelWaitingAtOnce: boolean;
  /** The ending a steering marker asks for on this turn, instead of asking the model. */
  scriptedEnding(run: R): ScriptedEnding | undefined;
  /** What the model reads and may call on this turn. */
  modelInput(thread: T, run: R): { messages: ModelMessage[]; tools: ModelTool[] };
  /** Records a turn that asked for tool calls (a step, a round, usage). */
  toolCallsAsked(thread: T, run: R, calls: RunToolCall[], input: readonly ModelMessage[], context: RouteContext): void;
  /** Writes the answer on the thread; returns it and the run's ending. */
  answered(thread: T, run: R, reply: ModelTextReply, input: readonly ModelMessage[], context: RouteContext): { message: M; status: 'completed' | 'incomplete' };
  /** `last_error.message` of a run that failed as asked. */
  failureMessage(run: R): string;
  /** The wire's own bookkeeping of an ending (its steps). */
  ended?(run: R, status: string): void;
  /** The error for cancelling a run that is no longer active. */
  cannotCancel(run: R, status: string): Error;
  /** Sends the events of a settled turn, ending with the run's status event; false when the client has gone. */
  streamTurn(thread: T, run: R, settled: SettledTurn<M>, send: SendEvent, context: RouteContext, created: boolean): Promise<boolean>;
}

/** Drives runs of one wire through their lifecycle. */
export class RunSimulator<T, R extends SimulatedRun, M> {
  constructor(private readonly wire: RunWireStrategy<T, R, M>) {}

  /** One retrieve's worth of progress: cancelling -> cancelled; queued -> in_progress (xN) -> settled. */
  poll(thread: T, run: R, context: RouteContext): void {
    const status = run.object.status;
    if (status === 'cancelling') this.finish(run, 'cancelled');
    else if (status === 'queued') this.start(run);
    else if (status === 'in_progress' && !run.stuck) {
      if (run.pollsLeft > 0) run.pollsLeft--;
      else this.settle(thread, run, context);
    }
  }

  /** Cancels an active run; throws the wire's error for one that has ended. */
  cancel(run: R): void {
    const status = run.object.status as string;
    if (!ACTIVE_RUN_STATUSES.has(status)) throw this.wire.cannotCancel(run, status);
    if (status === 'requires_action' && this.wire.cancelWaitingAtOnce) return this.finish(run, 'cancelled');
    if (status === 'cancelling') return;
    run.object.status = 'cancelling';
    run.object.required_action = null;
    run.onCancel?.();
  }

  /** Tool outputs were accepted: the run is queued again. */
  resume(run: R): void {
    run.object.status = 'queued';
    run.object.required_action = null;
  }

  /** Runs the run to its next stop (requires_action or an end) as Assistants SSE events. */
  async stream(thread: T, run: R, reply: RouteReply, context: RouteContext, opening: { created: boolean; threadCreated?: Json }): Promise<void> {
    const sse = reply.sse();
    const send: SendEvent = (event, data) => sse.send(data, event);
    if (opening.threadCreated && !(await send('thread.created', opening.threadCreated))) return;
    if (opening.created && !(await send('thread.run.created', run.object))) return;
    if (!(await send('thread.run.queued', run.object))) return;
    this.start(run);
    if (!(await send('thread.run.in_progress', run.object))) return;
    let settled: SettledTurn<M> = {};
    if (run.stuck) {
      // Holds the stream open, as a slow run would, until the client leaves or cancels.
      if (run.object.status === 'in_progress') {
        await new Promise<void>((resolve) => {
          run.onCancel = resolve;
          reply.raw.once('close', () => resolve());
        });
      }
      run.onCancel = undefined;
      if (!sse.open) return;
      this.finish(run, 'cancelled');
    } else {
      settled = this.settle(thread, run, context);
    }
    if (!(await this.wire.streamTurn(thread, run, settled, send, context, opening.created))) return;
    if (!(await sse.send('[DONE]', 'done'))) return;
    await sse.end();
  }

  private start(run: R): void {
    run.object.status = 'in_progress';
    run.object.started_at ??= nowSeconds();
  }

  /** Asks the model (or follows the steering marker) and moves the run to requires_action or its ending. */
  private settle(thread: T, run: R, context: RouteContext): SettledTurn<M> {
    const scripted = this.wire.scriptedEnding(run);
    if (scripted) {
      this.finish(run, scripted);
      return {};
    }
    const { messages, tools } = this.wire.modelInput(thread, run);
    const reply = context.model.reply(messages, tools);
    if (isToolCallsReply(reply)) {
      const calls = reply.toolCalls.map((c): RunToolCall => ({ id: context.ids.next('call_'), type: 'function', function: { name: c.name, arguments: c.arguments } }));
      this.wire.toolCallsAsked(thread, run, calls, messages, context);
      run.object.status = 'requires_action';
      run.object.required_action = { type: 'submit_tool_outputs', submit_tool_outputs: { tool_calls: calls } };
      return { calls };
    }
    const { message, status } = this.wire.answered(thread, run, reply, messages, context);
    this.finish(run, status);
    return { message };
  }

  private finish(run: R, status: string): void {
    const object = run.object;
    object.status = status;
    object.required_action = null;
    if (status === 'cancelled') object.cancelled_at = nowSeconds();
    if (status === 'completed') object.completed_at = nowSeconds();
    if (status === 'failed') {
      object.failed_at = nowSeconds();
      object.last_error = { code: 'server_error', message: this.wire.failureMessage(run) };
    }
    if (status === 'incomplete') object.incomplete_details = { reason: 'max_completion_tokens' };
    this.wire.ended?.(run, status);
  }
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

/** How many characters of a tool call's arguments one streamed delta carries (as the other wires stream them). */
const ARGUMENT_FRAGMENT_LENGTH = 8;

/** A tool call's arguments in the pieces a stream sends them in; no arguments are one empty piece. */
export function argumentFragments(text: string): string[] {
  if (text.length === 0) return [''];
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += ARGUMENT_FRAGMENT_LENGTH) pieces.push(text.slice(i, i + ARGUMENT_FRAGMENT_LENGTH));
  return pieces;
}

/** The events of an answer message, from its step's creation to the run's ending event. */
export interface AnswerEvents {
  stepCreated: Json;
  stepCompleted: Json;
  /** The message as `thread.message.created` / `in_progress` show it. */
  opening: Json;
  message: Json & { id: unknown; status: unknown };
  words: readonly string[];
  annotations: readonly Json[];
  role?: 'assistant';
  run: RunWire;
}

/** Sends an answer: step created, message created / in_progress / deltas / done, step completed, the run's status. */
export async function sendAnswerEvents(send: SendEvent, e: AnswerEvents): Promise<boolean> {
  if (!(await send('thread.run.step.created', e.stepCreated))) return false;
  if (!(await send('thread.message.created', e.opening))) return false;
  if (!(await send('thread.message.in_progress', e.opening))) return false;
  if (!(await sendTextDeltas(send, e.message.id, e.words, e.annotations, e.role))) return false;
  if (!(await send(e.message.status === 'incomplete' ? 'thread.message.incomplete' : 'thread.message.completed', e.message))) return false;
  if (!(await send('thread.run.step.completed', e.stepCompleted))) return false;
  return send(`thread.run.${e.run.status as string}`, e.run);
}

/**
 * Sends `thread.message.delta` events, one per word; an annotation rides on the delta that
 * completes the text it covers. `role` is set on each delta where the service sends it (Foundry).
 * Returns false when the client has gone.
 */
export async function sendTextDeltas(
  send: SendEvent,
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
