import type { ConfigProblems } from './config-problems.js';
import type { ConfigPath, ExpectedType } from './env-substitution.js';

type FieldRule = { check: (value: unknown) => boolean; expected: string; type: ExpectedType };
const isString = (v: unknown) => typeof v === 'string';
const isInt = (v: unknown) => Number.isInteger(v);

function isHistoryLimit(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  const positive = (v: unknown) => Number.isInteger(v) && (v as number) > 0;
  return entries.length > 0 && entries.every(([k, v]) => ((k === 'maxMessages' || k === 'maxTokens') && positive(v)) || (k === 'summarize' && isSummarize(v)));
}

function isSummarize(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const { maxMessages, keep, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length || !Number.isInteger(maxMessages) || (maxMessages as number) < 2) return false;
  return keep === undefined || (Number.isInteger(keep) && (keep as number) >= 1 && (keep as number) < (maxMessages as number));
}

/** `{ engine, unrecordedTools?, stream?, streamDeltas?, queue? }` (which engines exist is checked against the loaded plugins). */
function isDurability(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const { engine, unrecordedTools, stream, streamDeltas, queue, ...rest } = value as Record<string, unknown>;
  return (
    Object.keys(rest).length === 0 &&
    isString(engine) &&
    (unrecordedTools === undefined || (Array.isArray(unrecordedTools) && unrecordedTools.every(isString))) &&
    (stream === undefined || typeof stream === 'boolean') &&
    (streamDeltas === undefined || typeof streamDeltas === 'boolean') &&
    (queue === undefined || isString(queue))
  );
}

/** The core agent keys: how each is checked, and the type a `${VAR}` there becomes. */
const AGENT_FIELD_RULES: Record<string, FieldRule> = {
  client: { check: (v) => isString(v) && v !== '', expected: 'a non-empty string', type: 'string' },
  model: { check: isString, expected: 'a string', type: 'string' },
  instructions: { check: isString, expected: 'a string', type: 'string' },
  name: { check: (v) => isString(v) && v !== '', expected: 'a non-empty string', type: 'string' },
  description: { check: isString, expected: 'a string', type: 'string' },
  messageStore: { check: isString, expected: 'a string', type: 'string' },
  tools: { check: (v) => Array.isArray(v) && v.every(isString), expected: 'an array of tool names', type: 'string' },
  temperature: { check: (v) => typeof v === 'number' && Number.isFinite(v), expected: 'a number', type: 'number' },
  maxOutputTokens: { check: (v) => isInt(v) && (v as number) > 0, expected: 'a positive integer', type: 'integer' },
  maxToolIterations: { check: (v) => isInt(v) && (v as number) >= 0, expected: 'a non-negative integer', type: 'integer' },
  concurrency: { check: (v) => v === 'queue' || v === 'reject', expected: '"queue" or "reject"', type: 'string' },
  keepPartial: { check: (v) => typeof v === 'boolean', expected: 'true or false', type: 'boolean' },
  durability: { check: isDurability, expected: 'an object { engine, unrecordedTools?: string[], stream?: boolean, streamDeltas?: boolean, queue?: string }', type: 'string' },
  history: { check: isHistoryLimit, expected: 'an object with a positive integer maxMessages and/or maxTokens, and/or summarize: { maxMessages (2 or more), keep (1 to maxMessages - 1) }', type: 'integer' },
};

/**
 * The type a core agent key holds at `path` (relative to the agent), for `${VAR}` coercion;
 * `undefined` for provider keys, which no core schema describes.
 */
export function agentKeyType(path: ConfigPath): ExpectedType {
  const rule = typeof path[0] === 'string' && Object.hasOwn(AGENT_FIELD_RULES, path[0]) ? AGENT_FIELD_RULES[path[0]] : undefined;
  return rule?.type;
}

/** The core agent keys' types (provider keys are the plugin's to check); one problem per bad field. */
export function checkAgentFields(name: string, agent: unknown, problems: ConfigProblems): boolean {
  const at = `agents.${name}`;
  if (!agent || typeof agent !== 'object' || Array.isArray(agent)) {
    problems.add(at, 'expected an object with at least "client".');
    return false;
  }
  let ok = true;
  const fields = agent as Record<string, unknown>;
  if (fields.client === undefined) {
    problems.add(`${at}.client`, 'required; name the client a plugin provides, e.g. "openai-chat".');
    ok = false;
  }
  for (const [key, { check, expected }] of Object.entries(AGENT_FIELD_RULES)) {
    const value = fields[key];
    if (value === undefined) continue;
    if (problems.anyAt(`${at}.${key}`)) ok = false;
    else if (!check(value)) {
      problems.add(`${at}.${key}`, `expected ${expected}, found ${JSON.stringify(value)}.`);
      ok = false;
    }
  }
  return ok;
}
