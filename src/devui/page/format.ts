/** How the page words what it shows: usage, values, arguments, durations, settings, answers and tool sources. */
import type { ApprovalAnswer, RunSettings } from '../devui-api-types.js';
import type { ToolSourceInfo, Usage } from './page-types.js';

export function formatUsage(usage: Usage): string {
  const parts: string[] = [];
  if (usage.inputTokens !== undefined) parts.push(`${usage.inputTokens} in`);
  if (usage.outputTokens !== undefined) parts.push(`${usage.outputTokens} out`);
  if (usage.totalTokens !== undefined) parts.push(`${usage.totalTokens} total`);
  return `Usage: ${parts.length ? parts.join(' · ') : 'not reported'}`;
}

export function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, undefined, 2);
  } catch {
    return String(value);
  }
}

export function prettyArguments(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), undefined, 2);
  } catch {
    return args;
  }
}

/** Who wrote a message, once: the author's name when it has one (with the role when that differs), else the role. */
export function authorLabel(role: string, author?: string): string {
  return author && author !== role ? `${author} · ${role}` : role;
}


export const formatMs = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

export function describeSettings(settings: RunSettings): string {
  const parts: string[] = [];
  if (settings.temperature !== undefined) parts.push(`temperature ${settings.temperature}`);
  if (settings.maxOutputTokens !== undefined) parts.push(`max tokens ${settings.maxOutputTokens}`);
  if (settings.model !== undefined) parts.push(`model ${settings.model}`);
  if (settings.instructions !== undefined) parts.push(`extra instructions: ${settings.instructions}`);
  return `Run settings: ${parts.join(' · ')}`;
}

export function withReason(answer: ApprovalAnswer, reason: string): ApprovalAnswer {
  return reason.trim() ? { ...answer, reason: reason.trim() } : answer;
}

export function describeAnswer(answer: { approved: boolean; reason?: string }, name: string): string {
  return answer.approved ? `Approved ${name}` : `Rejected ${name}${answer.reason ? `: ${answer.reason}` : ''}`;
}


/** `MCP server "files"`, plus the tool's own name there when the agent sees it under a prefix. */
export function describeSource(source: ToolSourceInfo, exposedName?: string): string {
  const where = source.kind === 'mcp' ? 'MCP server' : source.kind;
  const server = source.server !== undefined ? ` "${source.server}"` : '';
  const own = source.name !== undefined && source.name !== exposedName ? ` (tool "${source.name}" there)` : '';
  return `${where}${server}${own}`;
}
