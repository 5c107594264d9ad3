import type { FunctionCallContent, FunctionResultContent } from '../messages/content.js';

/**
 * Function results the agent writes itself, shared by the tool loop and the approval paths
 * (kept below both so neither imports the other): a call that was not run, and the call a
 * settled result answers.
 */

/** The result of a call that was not run; the model reads `error` as why. */
export function notRun(call: FunctionCallContent, error: string): FunctionResultContent {
  return { kind: 'function-result', callId: call.callId, error };
}

/** Key of a settled result's `additionalProperties` naming its call (for a service that lost the run). */
const SETTLED_CALL_KEY = 'settledCall';

/** The result, naming the call it answers: a new service run that reads it as a note needs the name. */
export function namingCall(result: FunctionResultContent, call: Pick<FunctionCallContent, 'name' | 'arguments'>): FunctionResultContent {
  return { ...result, additionalProperties: { ...result.additionalProperties, [SETTLED_CALL_KEY]: { name: call.name, arguments: call.arguments } } };
}

export function settledCallOf(result: FunctionResultContent): { name: string; arguments: string } | undefined {
  const call = result.additionalProperties?.[SETTLED_CALL_KEY];
  if (!call || typeof call !== 'object' || Array.isArray(call) || typeof call.name !== 'string') return undefined;
  return { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : '' };
}
