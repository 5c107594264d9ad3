import type { BaseEvent, Message, TokenUsage } from '@ag-ui/core';
import { randomUUID } from 'node:crypto';
import { type AgentRunResponseUpdate, type FunctionCallContent, type FunctionResultContent, type UsageDetails, addUsage } from 'skein';
import { AG_UI_MESSAGE_ID, resultContent, resultMessageId } from './ag-ui-messages.js';
import { EventType } from './ag-ui-peers.js';

interface CallState {
  callId: string;
  args: string;
  ended: boolean;
}

/**
 * Turns a Skein run's streamed updates into AG-UI events in the order the spec requires: a text
 * message is opened, filled and closed before a tool call starts; a tool call is started, its
 * arguments streamed and ended before its result; everything open is closed by `finish`.
 * One mapper per run.
 */
export class AgUiEventMapper {
  #text: string | undefined;
  /** The open reasoning message's id. */
  #reasoning: string | undefined;
  /** The id the last text message had, for tool calls that follow it in the same reply. */
  #lastTextId: string | undefined;
  readonly #calls = new Map<string, CallState>();
  /** Streamed argument deltas name their call only at first: `<messageId>:<index>` -> call id. */
  readonly #byIndex = new Map<string, string>();
  #usage: UsageDetails | undefined;
  /** The open step (STEP_STARTED sent, STEP_FINISHED not yet) and how many steps of each kind started. */
  #step: string | undefined;
  readonly #stepCounts = { model: 0, tools: 0 };
  /** Ids this mapper made up for updates that carried none (then the stored history has other ids). */
  madeUpIds = false;

  constructor(private readonly newId: () => string = randomUUID) {}

  map(update: AgentRunResponseUpdate): BaseEvent[] {
    const out: BaseEvent[] = [];
    if (update.text || update.contents.length || update.toolCallDelta) this.#enterStep(update.role === 'tool' ? 'tools' : 'model', out);
    for (const c of update.contents) if (c.kind === 'reasoning' && c.text) this.#appendReasoning(c.text, update.messageId, out);
    if (update.text && update.role !== 'tool') this.#appendText(update, out);
    const delta = update.toolCallDelta;
    if (delta && delta.serverLabel === undefined) {
      const key = `${update.messageId ?? ''}:${delta.index}`;
      const callId = delta.callId ?? this.#byIndex.get(key);
      if (callId !== undefined) {
        this.#byIndex.set(key, callId);
        let call = this.#calls.get(callId);
        if (!call && delta.name) call = this.#start(callId, delta.name, update.messageId, out);
        if (call && !call.ended && delta.argumentsDelta) {
          call.args += delta.argumentsDelta;
          out.push({ type: EventType.TOOL_CALL_ARGS, toolCallId: callId, delta: delta.argumentsDelta });
        }
      }
    }
    for (const c of update.contents) {
      if (c.kind === 'function-call') this.#call(c, update.messageId, out);
      else if (c.kind === 'function-result') this.#result(c, out);
      else if (c.kind === 'usage') this.#usage = addUsage(this.#usage, c.usage);
    }
    return out;
  }

  /** Closes whatever is still open (a text message, tool calls whose end never came). */
  finish(): BaseEvent[] {
    const out: BaseEvent[] = [];
    this.#closeReasoning(out);
    this.#closeText(out);
    for (const call of this.#calls.values()) this.#end(call, out);
    this.#finishStep(out);
    return out;
  }

  /**
   * Closes whatever is open and forgets the text and tool calls seen so far, so a model call made
   * again (a durable run's retry) opens its messages and calls afresh, even with the same call ids.
   * Usage and step numbers go on.
   */
  restart(): BaseEvent[] {
    const out = this.finish();
    this.#calls.clear();
    this.#byIndex.clear();
    this.#lastTextId = undefined;
    return out;
  }

  /**
   * Steps: each model call is a step `model-call-<n>` and each round of tool results a step
   * `tool-round-<n>` (n from 1 in the run). A step starts with its first update and finishes when
   * the other kind starts or the run ends, after whatever it opened is closed.
   */
  #enterStep(kind: 'model' | 'tools', out: BaseEvent[]): void {
    const name = kind === 'model' ? 'model-call' : 'tool-round';
    if (this.#step?.startsWith(`${name}-`)) return;
    if (kind === 'tools') {
      // The model call that made these calls is over: its text and calls are closed inside its step.
      this.#closeReasoning(out);
      this.#closeText(out);
      this.#closeCalls(out);
    }
    this.#finishStep(out);
    this.#step = `${name}-${++this.#stepCounts[kind]}`;
    out.push({ type: EventType.STEP_STARTED, stepName: this.#step } as BaseEvent);
  }

  #finishStep(out: BaseEvent[]): void {
    if (this.#step === undefined) return;
    out.push({ type: EventType.STEP_FINISHED, stepName: this.#step } as BaseEvent);
    this.#step = undefined;
  }

  /** The run's token usage, as RUN_FINISHED carries it. */
  get usage(): TokenUsage[] | undefined {
    const u = this.#usage;
    if (!u) return undefined;
    return [{ ...(u.inputTokens !== undefined ? { inputTokens: u.inputTokens } : {}), ...(u.outputTokens !== undefined ? { outputTokens: u.outputTokens } : {}), ...(u.totalTokens !== undefined ? { totalTokens: u.totalTokens } : {}) }];
  }

  #appendText(update: AgentRunResponseUpdate, out: BaseEvent[]): void {
    let id = update.messageId;
    if (id === undefined) {
      id = this.#text ?? this.newId();
      this.madeUpIds = true;
    }
    this.#closeReasoning(out);
    if (this.#text !== id) {
      this.#closeText(out);
      this.#closeCalls(out);
      out.push({ type: EventType.TEXT_MESSAGE_START, messageId: id, role: 'assistant' });
      this.#text = id;
      this.#lastTextId = id;
    }
    out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: update.text });
  }

  #start(callId: string, name: string, messageId: string | undefined, out: BaseEvent[]): CallState {
    this.#closeReasoning(out);
    this.#closeText(out);
    const parent = messageId ?? this.#lastTextId;
    out.push({ type: EventType.TOOL_CALL_START, toolCallId: callId, toolCallName: name, ...(parent !== undefined ? { parentMessageId: parent } : {}) });
    const call: CallState = { callId, args: '', ended: false };
    this.#calls.set(callId, call);
    return call;
  }

  #call(c: FunctionCallContent, messageId: string | undefined, out: BaseEvent[]): void {
    const call = this.#calls.get(c.callId) ?? this.#start(c.callId, c.name, messageId, out);
    if (call.ended) return;
    // The full arguments arrive with the finished call: send what the deltas did not.
    if (c.arguments !== call.args && c.arguments.startsWith(call.args) && c.arguments.length > call.args.length) {
      out.push({ type: EventType.TOOL_CALL_ARGS, toolCallId: c.callId, delta: c.arguments.slice(call.args.length) });
      call.args = c.arguments;
    }
    this.#end(call, out);
  }

  #result(c: FunctionResultContent, out: BaseEvent[]): void {
    this.#closeText(out);
    const call = this.#calls.get(c.callId);
    if (call) this.#end(call, out);
    // A frontend tool's result came from the client, which already holds it.
    if (c.additionalProperties?.[AG_UI_MESSAGE_ID] !== undefined) return;
    out.push({ type: EventType.TOOL_CALL_RESULT, messageId: resultMessageId(c), toolCallId: c.callId, content: resultContent(c), role: 'tool' });
  }

  #end(call: CallState, out: BaseEvent[]): void {
    if (call.ended) return;
    call.ended = true;
    out.push({ type: EventType.TOOL_CALL_END, toolCallId: call.callId });
  }

  #closeCalls(out: BaseEvent[]): void {
    for (const call of this.#calls.values()) this.#end(call, out);
  }

  /** Reasoning text streams as its own message, before the reply it leads to. */
  #appendReasoning(text: string, messageId: string | undefined, out: BaseEvent[]): void {
    if (this.#reasoning === undefined) {
      this.#closeText(out);
      this.#closeCalls(out);
      const id = `${messageId ?? this.newId()}-reasoning`;
      out.push({ type: EventType.REASONING_START, messageId: id }, { type: EventType.REASONING_MESSAGE_START, messageId: id, role: 'reasoning' });
      this.#reasoning = id;
    }
    out.push({ type: EventType.REASONING_MESSAGE_CONTENT, messageId: this.#reasoning, delta: text });
  }

  #closeReasoning(out: BaseEvent[]): void {
    if (this.#reasoning === undefined) return;
    out.push({ type: EventType.REASONING_MESSAGE_END, messageId: this.#reasoning }, { type: EventType.REASONING_END, messageId: this.#reasoning });
    this.#reasoning = undefined;
  }

  #closeText(out: BaseEvent[]): void {
    if (this.#text === undefined) return;
    out.push({ type: EventType.TEXT_MESSAGE_END, messageId: this.#text });
    this.#text = undefined;
  }
}

/**
 * The messages a stream of events makes, applied to `messages` (a copy is returned): what a
 * client shows after the run. The server keeps this for service threads; AgUiAgent reads
 * replies with it.
 */
export function applyMessageEvents(messages: readonly Message[], events: readonly BaseEvent[]): Message[] {
  const out = messages.map((m) => ({ ...m }) as Message);
  const find = (id: string) => out.find((m) => m.id === id);
  const assistant = (id: string): Extract<Message, { role: 'assistant' }> => {
    const found = find(id);
    if (found?.role === 'assistant') return found;
    const made: Extract<Message, { role: 'assistant' }> = { id, role: 'assistant' };
    out.push(made);
    return made;
  };
  const calls = new Map<string, { function: { arguments: string } }>();
  for (const event of events) {
    const e = event as BaseEvent & Record<string, unknown>;
    switch (event.type) {
      case EventType.TEXT_MESSAGE_START:
        assistant(e.messageId as string);
        break;
      case EventType.TEXT_MESSAGE_CONTENT: {
        const m = assistant(e.messageId as string);
        m.content = (m.content ?? '') + (e.delta as string);
        break;
      }
      case EventType.TOOL_CALL_START: {
        const m = assistant((e.parentMessageId as string | undefined) ?? (e.toolCallId as string));
        const call = { id: e.toolCallId as string, type: 'function' as const, function: { name: e.toolCallName as string, arguments: '' } };
        m.toolCalls = [...(m.toolCalls ?? []), call];
        calls.set(call.id, call);
        break;
      }
      case EventType.TOOL_CALL_ARGS: {
        const call = calls.get(e.toolCallId as string);
        if (call) call.function.arguments += e.delta as string;
        break;
      }
      case EventType.TOOL_CALL_RESULT:
        if (!find(e.messageId as string)) out.push({ id: e.messageId as string, role: 'tool', toolCallId: e.toolCallId as string, content: e.content as string });
        break;
      case EventType.MESSAGES_SNAPSHOT:
        out.splice(0, out.length, ...(e.messages as Message[]));
        break;
      default:
        break;
    }
  }
  return out;
}
