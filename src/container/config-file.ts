import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { z } from 'zod';
import { ConfigurationError } from '../errors/skein-error.js';
import type { AgentConfig, SkeinConfig } from './skein-config.js';
import type { SkeinPlugin } from './skein-plugin.js';

/**
 * A plugin factory as a config file reaches it: called with the plugin's settings. A factory may
 * carry a zod `configSchema` so its settings are checked up front with the rest of the file.
 */
export type PluginFactory = ((settings: Record<string, unknown>) => SkeinPlugin) & {
  /** The schema, or a function that builds it on demand (so importing the plugin need not load zod). */
  configSchema?: z.ZodType | (() => z.ZodType | Promise<z.ZodType>);
};

/** Built-in plugins, found by id in this package. */
export const BUILTIN_PLUGINS: Readonly<Record<string, { module: string; export: string }>> = {
  openai: { module: 'skein/openai', export: 'openaiPlugin' },
  sqlite: { module: 'skein/store-sqlite', export: 'sqliteStorePlugin' },
  redis: { module: 'skein/store-redis', export: 'redisStorePlugin' },
  postgres: { module: 'skein/store-postgres', export: 'postgresStorePlugin' },
  'azure-ai-agents': { module: 'skein/azure-ai-agents', export: 'azureAIAgentsPlugin' },
  a2a: { module: 'skein/a2a', export: 'a2aPlugin' },
  telemetry: { module: 'skein/telemetry', export: 'telemetryPlugin' },
  mcp: { module: 'skein/mcp', export: 'mcpPlugin' },
};

/** What a config file holds (after `${ENV}` interpolation). */
export interface SkeinConfigFile {
  /** Plugin id -> settings. Third-party plugins add `module` (package or path) and optionally `export`. */
  plugins?: Record<string, Record<string, unknown> | null>;
  agents?: Record<string, AgentConfig>;
}

// yaml and zod load only when a config file is read: most apps never pay for them at import.
async function fileSchema() {
  const { z } = await import('zod');
  return z
    .object({
      plugins: z.record(z.string(), z.union([z.record(z.string(), z.unknown()), z.null()])).optional(),
      agents: z.record(z.string(), z.object({ client: z.string() }).passthrough()).optional(),
    })
    .strict();
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Reads a JSON or YAML config file into a SkeinConfig: interpolates `${VAR}` / `${VAR:-default}`
 * from the environment, checks the shape, imports each plugin (built-in by id, third-party by
 * `module`), checks each plugin's settings against its `configSchema`, and reports every problem
 * in one ConfigurationError, each with its path.
 */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<SkeinConfig> {
  const { config, problems } = await readConfigFile(file, env);
  if (problems.length) throw new ConfigurationError(problems);
  return config;
}

/** Like loadConfigFile, but returns the problems instead of throwing, so callers can add their own. */
export async function readConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<{ config: SkeinConfig; problems: string[] }> {
  const absolute = path.resolve(file);
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (error) {
    throw new ConfigurationError(`Cannot read config file ${absolute}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = /\.ya?ml$/i.test(absolute) ? (await import('yaml')).parse(text) : JSON.parse(text);
  } catch (error) {
    throw new ConfigurationError(`${absolute} is not valid ${/\.ya?ml$/i.test(absolute) ? 'YAML' : 'JSON'}: ${(error as Error).message}`);
  }
  return resolveConfigFile(raw ?? {}, { env, baseDir: path.dirname(absolute) });
}

/** Resolves already-parsed config file content; problems are returned, not thrown. */
export async function resolveConfigFile(
  raw: unknown,
  options: { env?: NodeJS.ProcessEnv; baseDir?: string } = {},
): Promise<{ config: SkeinConfig; problems: string[] }> {
  const problems: string[] = [];
  const interpolated = interpolate(raw, options.env ?? process.env, '', problems);
  const parsed = (await fileSchema()).safeParse(interpolated);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${issue.path.join('.') || '(root)'}: ${issue.message}`);
    return { config: {}, problems };
  }
  const file = parsed.data as SkeinConfigFile;
  const plugins: SkeinPlugin[] = [];
  for (const [id, settings] of Object.entries(file.plugins ?? {})) {
    const plugin = await instantiatePlugin(id, settings ?? {}, options.baseDir ?? process.cwd(), problems);
    if (plugin) plugins.push(plugin);
  }
  return { config: { plugins, agents: file.agents }, problems };
}

async function instantiatePlugin(
  id: string,
  settings: Record<string, unknown>,
  baseDir: string,
  problems: string[],
): Promise<SkeinPlugin | undefined> {
  const { module: moduleName, export: exportName, ...pluginSettings } = settings as { module?: unknown; export?: unknown };
  const builtin = BUILTIN_PLUGINS[id];
  const specifier = typeof moduleName === 'string' ? moduleName : builtin?.module;
  if (!specifier) {
    problems.push(
      `plugins.${id}: unknown plugin "${id}"; built-in plugins: ${Object.keys(BUILTIN_PLUGINS).join(', ')}. For a third-party plugin add "module: <package or path>".`,
    );
    return undefined;
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(toImportSpecifier(specifier, baseDir))) as Record<string, unknown>;
  } catch (error) {
    problems.push(`plugins.${id}.module: cannot import "${specifier}": ${(error as Error).message}`);
    return undefined;
  }
  const name = typeof exportName === 'string' ? exportName : (builtin?.export ?? 'default');
  const factory = loaded[name];
  if (typeof factory !== 'function') {
    problems.push(`plugins.${id}.export: "${specifier}" has no plugin factory function named "${name}".`);
    return undefined;
  }
  const declared = (factory as PluginFactory).configSchema;
  const schema = typeof declared === 'function' ? await declared() : declared;
  if (schema) {
    const check = schema.safeParse(pluginSettings);
    if (!check.success) {
      for (const issue of check.error.issues) problems.push(`plugins.${id}.${issue.path.join('.')}: ${issue.message}`);
      return undefined;
    }
  }
  try {
    return (factory as PluginFactory)(pluginSettings);
  } catch (error) {
    problems.push(`plugins.${id}: ${(error as Error).message}`);
    return undefined;
  }
}

function toImportSpecifier(specifier: string, baseDir: string): string {
  if (specifier.startsWith('.') || path.isAbsolute(specifier)) return pathToFileURL(path.resolve(baseDir, specifier)).href;
  return specifier;
}

/** Replaces `${VAR}` in every string; a missing variable without default is a problem at its path. */
function interpolate(value: unknown, env: NodeJS.ProcessEnv, at: string, problems: string[]): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REF, (_match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined) return found;
      if (fallback !== undefined) return fallback;
      problems.push(`${at || '(root)'}: environment variable ${name} is not set (referenced as \${${name}}).`);
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, env, `${at}[${i}]`, problems));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, env, at ? `${at}.${k}` : k, problems);
    return out;
  }
  return value;
}
