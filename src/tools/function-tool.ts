import type { z } from 'zod';
import type { ToolDeclaration } from '../clients/chat-options.js';
import type { FunctionCallContent, FunctionResultContent } from '../messages/content.js';
import { AbortError } from '../errors/skein-error.js';
import type { JsonObject, JsonValue } from '../serialization/json.js';
import type { AITool, ToolInvocationContext } from './ai-tool.js';

export interface FunctionToolOptions<S extends z.ZodType> {
  name: string;
  description?: string;
  /** A zod schema for the arguments object; it becomes the JSON Schema the model sees. */
  parameters: S;
  execute: (args: z.infer<S>, context: ToolInvocationContext) => unknown;
  /** Ask the user before each call (human in the loop). */
  requiresApproval?: boolean;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** A tool backed by a TypeScript function with zod-checked arguments. */
export class FunctionTool<S extends z.ZodType = z.ZodType> implements AITool {
  readonly declaration: ToolDeclaration;
  readonly requiresApproval: boolean;
  readonly #options: FunctionToolOptions<S>;

  constructor(options: FunctionToolOptions<S>) {
    if (!TOOL_NAME.test(options.name)) {
      throw new TypeError(`Tool name "${options.name}" is invalid: use 1-64 letters, digits, "_" or "-".`);
    }
    this.#options = options;
    this.requiresApproval = options.requiresApproval ?? false;
    // The schema's own converter (the same as zod's toJSONSchema): importing zod here would cost
    // every user ~12 MiB of RSS at import, tools or not.
    const parameters = options.parameters.toJSONSchema({ target: 'draft-7' }) as JsonObject;
    delete parameters.$schema;
    this.declaration = { name: options.name, description: options.description, parameters };
  }

  get name(): string {
    return this.#options.name;
  }

  async invoke(context: ToolInvocationContext): Promise<FunctionResultContent> {
    const { callId } = context.call;
    const raw = readCallArguments(context.call, this.name);
    if (!raw.ok) return raw.result;
    const parsed = this.#options.parameters.safeParse(raw.value);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      return { kind: 'function-result', callId, error: `Invalid arguments for ${this.name}: ${issues}` };
    }
    try {
      const value = await this.#options.execute(parsed.data, context);
      return { kind: 'function-result', callId, result: toJsonValue(value) };
    } catch (error) {
      if (context.signal.aborted) throw new AbortError(undefined, { cause: error });
      return { kind: 'function-result', callId, error: `${this.name} failed: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
}

/**
 * A call's arguments as JSON (`{}` when the model sent none), or the function result that tells
 * the model they were not JSON, for any tool that reads `context.call.arguments` itself.
 */
export function readCallArguments(call: FunctionCallContent, toolName: string): { ok: true; value: unknown } | { ok: false; result: FunctionResultContent } {
  try {
    return { ok: true, value: call.arguments.trim() === '' ? {} : JSON.parse(call.arguments) };
  } catch (error) {
    return { ok: false, result: { kind: 'function-result', callId: call.callId, error: `Invalid JSON arguments for ${toolName}: ${(error as Error).message}. Send a JSON object.` } };
  }
}

/** `tool({ name, description, parameters: z.object({...}), execute })` */
export function tool<S extends z.ZodType>(options: FunctionToolOptions<S>): FunctionTool<S> {
  return new FunctionTool(options);
}

function toJsonValue(value: unknown): JsonValue {
  if (value === undefined) return null;
  if (typeof value === 'string') return value;
  try {
    return JSON.parse(JSON.stringify(value)) as JsonValue;
  } catch {
    return String(value);
  }
}
