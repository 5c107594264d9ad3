import type { JsonObject } from '../serialization/json.js';

/** A function the model may call, as the service sees it. */
export interface ToolDeclaration {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: JsonObject;
}

export type ToolChoice = 'auto' | 'none' | 'required';

/** Per-request options a ChatClient understands. Unknown keys go in `additionalProperties`. */
export interface ChatOptions {
  model?: string;
  instructions?: string;
  tools?: readonly ToolDeclaration[];
  toolChoice?: ToolChoice;
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stop?: string[];
  seed?: number;
  /** The service-side conversation to continue (a service thread id). */
  conversationId?: string;
  signal?: AbortSignal;
  /** Provider-specific options, passed through by clients that know them (e.g. `store`). */
  additionalProperties?: Record<string, unknown>;
}

/** Later wins, key by key; `additionalProperties` are merged too. */
export function mergeChatOptions(...layers: (ChatOptions | undefined)[]): ChatOptions {
  const merged: ChatOptions = {};
  for (const layer of layers) {
    if (!layer) continue;
    for (const [key, value] of Object.entries(layer) as [keyof ChatOptions, unknown][]) {
      if (value === undefined) continue;
      if (key === 'additionalProperties') {
        merged.additionalProperties = { ...merged.additionalProperties, ...(value as Record<string, unknown>) };
      } else {
        (merged as Record<string, unknown>)[key] = value;
      }
    }
  }
  return merged;
}
