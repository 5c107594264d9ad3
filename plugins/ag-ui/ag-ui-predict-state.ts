import type { BaseEvent } from '@ag-ui/core';
import type { FunctionCallContent, JsonValue } from 'skein';
import { EventType } from './ag-ui-peers.js';
import { parsePartialJson } from './partial-json.js';

/**
 * Predictive state updates: while the model streams a call to `tool`, the value of its argument
 * `toolArgument` is streamed into the shared state under `stateKey` (STATE_DELTA), before the
 * tool runs. Announced to the client at the start of each run as the CUSTOM event `PredictState`
 * (value `[{ state_key, tool, tool_argument }]`, as CopilotKit, LangGraph and Microsoft Agent
 * Framework send it).
 */
export interface AgUiPredictState {
  /** The top-level key of the shared state the argument is streamed into. */
  stateKey: string;
  /** The tool whose calls are watched. */
  tool: string;
  /** The argument of that tool whose value becomes the state key's. */
  toolArgument: string;
}

/** The name of the CUSTOM event that announces the predictions. */
export const PREDICT_STATE_EVENT = 'PredictState';

/** The CUSTOM event announcing `rules`, in the wire form front ends read. */
export function predictStateEvent(rules: readonly AgUiPredictState[]): BaseEvent {
  return { type: EventType.CUSTOM, name: PREDICT_STATE_EVENT, value: rules.map((r) => ({ state_key: r.stateKey, tool: r.tool, tool_argument: r.toolArgument })) } as BaseEvent;
}

/**
 * Follows one run's tool-call events and says what the predicted state keys are worth: as the
 * arguments of a watched call stream (partial JSON), and when a watched call's result arrives.
 */
export class PredictedState {
  /** Watched calls of this run: call id -> the rules for its tool and its arguments so far. */
  readonly #calls = new Map<string, { rules: AgUiPredictState[]; args: string }>();
  readonly #byTool = new Map<string, AgUiPredictState[]>();

  /** `waiting`: calls started in an earlier run whose results may arrive in this one (approvals). */
  constructor(rules: readonly AgUiPredictState[], waiting: readonly FunctionCallContent[] = []) {
    for (const rule of rules) this.#byTool.set(rule.tool, [...(this.#byTool.get(rule.tool) ?? []), rule]);
    for (const call of waiting) this.#watch(call.callId, call.name, call.arguments);
  }

  /**
   * The state keys an event predicts (`undefined`: none). TOOL_CALL_START and TOOL_CALL_ARGS of a
   * watched tool predict the argument as streamed so far, once it has a value.
   */
  predict(event: BaseEvent): Record<string, JsonValue> | undefined {
    const e = event as BaseEvent & { toolCallId?: string; toolCallName?: string; delta?: string };
    if (event.type === EventType.TOOL_CALL_START && e.toolCallId !== undefined && e.toolCallName !== undefined) {
      this.#watch(e.toolCallId, e.toolCallName, '');
      return undefined;
    }
    if (event.type !== EventType.TOOL_CALL_ARGS || e.toolCallId === undefined) return undefined;
    const call = this.#calls.get(e.toolCallId);
    if (!call) return undefined;
    call.args += e.delta ?? '';
    return valuesOf(call.rules, parsePartialJson(call.args));
  }

  /** The state keys a finished call sets when its result is not an error: its arguments' whole values. */
  settled(callId: string): Record<string, JsonValue> | undefined {
    const call = this.#calls.get(callId);
    if (!call) return undefined;
    let args: unknown;
    try {
      args = JSON.parse(call.args);
    } catch {
      return undefined; // arguments that are not JSON predict nothing
    }
    return valuesOf(call.rules, args);
  }

  #watch(callId: string, tool: string, args: string): void {
    const rules = this.#byTool.get(tool);
    if (rules) this.#calls.set(callId, { rules, args });
  }
}

function valuesOf(rules: readonly AgUiPredictState[], args: unknown): Record<string, JsonValue> | undefined {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  let out: Record<string, JsonValue> | undefined;
  for (const rule of rules) {
    const value = (args as Record<string, JsonValue>)[rule.toolArgument];
    if (value !== undefined) (out ??= {})[rule.stateKey] = value;
  }
  return out;
}
