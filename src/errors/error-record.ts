import { ToolApprovalRequiredError } from '../agents/tool-approval-gate.js';
import { ChatBusyError, AgentChatConfigurationError } from '../agent-chat/agent-chat-errors.js';
import { DurableEngineUnavailableError, DurableRunCancelledError, DurableRunError, DurableRunNotFoundError, DurableRunVersionError } from '../durable/durable-errors.js';
import * as core from './skein-error.js';

/**
 * A Skein error as plain data, to cross a process boundary (a durable engine's record of a
 * failed run): its class name, message and public fields. Skein errors are plain data plus a name.
 */
export interface SkeinErrorRecord {
  name: string;
  message: string;
  /** Own enumerable fields, e.g. `status`, `provider`, `partial`; JSON values only. */
  fields: Record<string, unknown>;
}

type ErrorClass = abstract new (...args: never[]) => Error;

const CORE_CLASSES: readonly ErrorClass[] = [
  ...(Object.values(core) as unknown[]).filter((value): value is ErrorClass => typeof value === 'function' && value.prototype instanceof Error),
  core.SkeinError,
  ToolApprovalRequiredError,
  ChatBusyError,
  AgentChatConfigurationError,
  DurableRunError,
  DurableEngineUnavailableError,
  DurableRunCancelledError,
  DurableRunNotFoundError,
  DurableRunVersionError,
];

// By name, not by evaluating anything recorded: only classes listed here are rebuilt.
const registry = new Map<string, ErrorClass>(CORE_CLASSES.map((c) => [c.name, c]));

/** Lets a plugin's error class be rebuilt from a record (its `name` must be unique among Skein errors). */
export function registerErrorClass(errorClass: ErrorClass): void {
  registry.set(errorClass.name, errorClass);
}

/** The record of `error`: its name, message and JSON-safe own fields (not `stack` or `cause`). */
export function toErrorRecord(error: Error): SkeinErrorRecord {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (key === 'name' || key === 'message' || key === 'stack' || key === 'cause' || value === undefined) continue;
    const json = jsonSafe(value);
    if (json !== undefined) fields[key] = json;
  }
  return { name: error.name, message: error.message, fields };
}

/**
 * The error a record describes: an instance of the registered class of that name (built without
 * its constructor, so the recorded message and fields are kept as they were), or, for a name not
 * registered here, a plain `Error` carrying the same name, message and fields.
 */
export function fromErrorRecord(record: SkeinErrorRecord, options?: { cause?: unknown }): Error {
  const errorClass = registry.get(record.name) ?? Error;
  const error = Reflect.construct(Error, [record.message, options], errorClass) as Error;
  Object.assign(error, record.fields);
  Object.defineProperty(error, 'name', { value: record.name, writable: true, enumerable: true, configurable: true });
  return error;
}

/** Whether `value` has the shape of a SkeinErrorRecord. */
export function isErrorRecord(value: unknown): value is SkeinErrorRecord {
  const record = value as Partial<SkeinErrorRecord> | null;
  return typeof record?.name === 'string' && typeof record.message === 'string' && typeof record.fields === 'object' && record.fields !== null;
}

function jsonSafe(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined; // circular or not serializable: left out rather than failing the run's record
  }
}
