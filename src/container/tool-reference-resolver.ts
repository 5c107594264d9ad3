import type { AITool } from '../tools/ai-tool.js';
import type { AIToolSet } from '../tools/ai-tool-set.js';

/**
 * Resolves `<prefix>:<rest>` entries of `agents.<name>.tools` (e.g. `mcp:files`) to tools. A
 * plugin contributes one under this token and declares the same prefix as its
 * `SkeinPlugin.toolReferences`, which checks references up front with the rest of the config.
 */
export const ToolReferenceResolver = Symbol('ToolReferenceResolver');
export interface ToolReferenceResolver {
  readonly prefix: string;
  resolve(reference: string): AITool | AIToolSet;
}

/** `mcp:files` -> { prefix: 'mcp', rest: 'files' }; plain tool names (no colon) -> undefined. */
export function parseToolReference(reference: string): { prefix: string; rest: string } | undefined {
  const colon = reference.indexOf(':');
  if (colon <= 0) return undefined;
  return { prefix: reference.slice(0, colon), rest: reference.slice(colon + 1) };
}
