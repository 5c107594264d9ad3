import type { z } from 'zod';

/** What every MCP server entry may say about its tools. */
export interface McpToolOptions {
  /** Only these tools (server names; `*` matches any run of characters). All when absent. */
  allowTools?: string[];
  /** Never these tools (same patterns); wins over `allowTools`. */
  denyTools?: string[];
  /** Put before every tool name the model sees, to keep names unique across servers (e.g. `files_`). */
  toolPrefix?: string;
  /** Which tools stop the run for the user's approval: `all`, `none` (default) or a list of server tool names / patterns. */
  requiresApproval?: 'all' | 'none' | string[];
  /** Per call, in milliseconds; a call that takes longer fails with McpTimeoutError. Default 60000. */
  timeoutMs?: number;
  /** For starting or reaching the server and listing its tools. Default 30000. */
  connectTimeoutMs?: number;
}

/** A server started as a child process speaking MCP over stdin/stdout. */
export interface McpStdioServerConfig extends McpToolOptions {
  command: string;
  args?: string[];
  /** Added to a minimal safe environment (PATH, HOME, ...), as the SDK does; never shown in errors. */
  env?: Record<string, string>;
  cwd?: string;
}

/** A remote server over Streamable HTTP, with the legacy SSE transport as a fallback. */
export interface McpHttpServerConfig extends McpToolOptions {
  url: string;
  /** Sent with every request (e.g. Authorization); never shown in errors. */
  headers?: Record<string, string>;
  /** `auto` (default): Streamable HTTP, then SSE when the server does not speak it. */
  transport?: 'auto' | 'streamable-http' | 'sse';
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

export function isStdioConfig(config: McpServerConfig): config is McpStdioServerConfig {
  return typeof (config as McpStdioServerConfig).command === 'string';
}

/** Where the server is, for error messages: the command line or the URL without credentials or query. */
export function describeTarget(config: McpServerConfig): string {
  if (isStdioConfig(config)) return [config.command, ...(config.args ?? [])].join(' ');
  try {
    const url = new URL(config.url);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** `web_*` -> /^web_.*$/ */
export function globToRegExp(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
}

/** The zod schema of one server entry (zod is loaded only when a config file is checked). */
export async function serverConfigSchema(): Promise<z.ZodType<McpServerConfig>> {
  const { z } = await import('zod');
  const names = z.array(z.string().min(1));
  const common = {
    allowTools: names.optional(),
    denyTools: names.optional(),
    toolPrefix: z.string().regex(/^[a-zA-Z0-9_-]*$/, 'use letters, digits, "_" or "-"').optional(),
    requiresApproval: z.union([z.literal('all'), z.literal('none'), names]).optional(),
    timeoutMs: z.number().int().positive().optional(),
    connectTimeoutMs: z.number().int().positive().optional(),
  };
  const stdio = z
    .object({
      command: z.string().min(1),
      args: z.array(z.string()).optional(),
      env: z.record(z.string(), z.string()).optional(),
      cwd: z.string().optional(),
      ...common,
    })
    .strict();
  const http = z
    .object({
      url: z.url({ protocol: /^https?$/ }),
      headers: z.record(z.string(), z.string()).optional(),
      transport: z.enum(['auto', 'streamable-http', 'sse']).optional(),
      ...common,
    })
    .strict();
  return z.union([stdio, http], { error: 'expected a stdio server ({ command, args?, env?, cwd? }) or an HTTP server ({ url, headers? })' });
}

export async function pluginConfigSchema(): Promise<z.ZodType> {
  const { z } = await import('zod');
  return z.object({ servers: z.record(z.string().regex(/^[A-Za-z0-9_-]+$/, 'server names use letters, digits, "_" or "-"'), await serverConfigSchema()) }).strict();
}
