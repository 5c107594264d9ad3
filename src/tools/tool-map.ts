import type { AITool } from './ai-tool.js';

/** Tools by name; two tools with one name are a mistake the caller must hear about. */
export function toolMap(tools: readonly AITool[]): Map<string, AITool> {
  const map = new Map<string, AITool>();
  for (const t of tools) {
    if (map.has(t.declaration.name)) throw new TypeError(`Two tools are named "${t.declaration.name}"; tool names must be unique per agent.`);
    map.set(t.declaration.name, t);
  }
  return map;
}
