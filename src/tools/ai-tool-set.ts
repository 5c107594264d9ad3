import type { AITool } from './ai-tool.js';

/**
 * Tools that are known only at run time (e.g. the tools an MCP server lists). An agent asks the
 * set for its tools at the start of every run, before it settles pending approvals, so a set may
 * change between runs and an approved call still finds its tool on resume.
 */
export interface AIToolSet {
  readonly kind: 'tool-set';
  /** For error messages, e.g. `mcp:files`. */
  readonly name: string;
  /** The tools for one run; rejects with a typed error when they cannot be listed. */
  listTools(signal?: AbortSignal): Promise<readonly AITool[]>;
}

export function isToolSet(value: AITool | AIToolSet): value is AIToolSet {
  return (value as AIToolSet).kind === 'tool-set';
}
