import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { z } from 'zod';
import { ConfigurationError } from '../errors/skein-error.js';
import { agentKeyType } from './agent-config-rules.js';
import { ConfigProblems } from './config-problems.js';
import { coerceSubstitutions, type ConfigPath, formatPath, substituteEnv, substitutionsUnder, type WholeSubstitution } from './env-substitution.js';
import { isBareSpecifier, resolvePackageFrom } from './package-resolution.js';
import { expectedTypeInZod } from './zod-expected-type.js';
import type { AgentConfig, SkeinConfig } from './skein-config.js';
import type { SkeinPlugin } from './skein-plugin.js';

/**
 * A plugin factory as a config file reaches it: called with the plugin's settings. A factory may
 * carry a zod `configSchema` so its settings are checked up front with the rest of the file.
 */
export type PluginFactory = ((settings: Record<string, unknown>) => SkeinPlugin) & {
  /** The schema, or a function that builds it on demand (so importing the plugin need not load zod). */
  configSchema?: z.ZodType | (() => z.ZodType | Promise<z.ZodType>);
  /**
   * The client and store ids the plugin provides, known before it is built: when its settings
   * are wrong, agents naming them are not reported again (without them, no agent's unknown
   * client is reported until the plugin loads).
   */
  clients?: readonly string[];
  stores?: readonly string[];
};

/**
 * Built-in plugins, found by id in this package, with the client and store ids each provides (so
 * when one fails to load, agents naming its clients are not reported a second time).
 */
export const BUILTIN_PLUGINS: Readonly<Record<string, BuiltinPlugin>> = {
  openai: { module: 'skein/openai', export: 'openaiPlugin', clients: ['openai-chat', 'openai-responses', 'openai-assistants'] },
  sqlite: { module: 'skein/store-sqlite', export: 'sqliteStorePlugin', stores: ['sqlite'] },
  redis: { module: 'skein/store-redis', export: 'redisStorePlugin', stores: ['redis'] },
  postgres: { module: 'skein/store-postgres', export: 'postgresStorePlugin', stores: ['postgres'] },
  'azure-ai-agents': { module: 'skein/azure-ai-agents', export: 'azureAIAgentsPlugin', clients: ['azure-ai-agents'] },
  a2a: { module: 'skein/a2a', export: 'a2aPlugin', clients: ['a2a'] },
  telemetry: { module: 'skein/telemetry', export: 'telemetryPlugin' },
};

export interface BuiltinPlugin {
  module: string;
  export: string;
  clients?: readonly string[];
  stores?: readonly string[];
}

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

/**
 * Reads a JSON or YAML config file into a SkeinConfig: interpolates `${VAR}` / `${VAR:-default}`
 * from the environment (a whole-value reference takes the type the setting expects), checks the
 * shape, imports each plugin (built-in by id, third-party by `module`, resolved from the file's
 * folder), checks each plugin's settings against its `configSchema`, and reports every problem in
 * one ConfigurationError, each with its path, once per root cause.
 */
export async function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<SkeinConfig> {
  const { config, problems } = await readConfigFile(file, env);
  if (problems.length) throw new ConfigurationError(problems);
  return config;
}

/** Like loadConfigFile, but returns the problems instead of throwing, so callers can add their own. */
export async function readConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): Promise<{ config: SkeinConfig; problems: string[] }> {
  const { config, problems } = await readConfigFileChecked(file, env);
  return { config, problems: [...problems.messages] };
}

/** Resolves already-parsed config file content; problems are returned, not thrown. */
export async function resolveConfigFile(
  raw: unknown,
  options: { env?: NodeJS.ProcessEnv; baseDir?: string } = {},
): Promise<{ config: SkeinConfig; problems: string[] }> {
  const problems = new ConfigProblems();
  const config = await resolveConfigContent(raw, options, problems);
  return { config, problems: [...problems.messages] };
}

/** readConfigFile with the problems kept structured, for createContainer to add the agents' problems. */
export async function readConfigFileChecked(file: string, env: NodeJS.ProcessEnv = process.env): Promise<{ config: SkeinConfig; problems: ConfigProblems }> {
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
  const problems = new ConfigProblems();
  const config = await resolveConfigContent(raw ?? {}, { env, baseDir: path.dirname(absolute) }, problems);
  return { config, problems };
}

async function resolveConfigContent(raw: unknown, options: { env?: NodeJS.ProcessEnv; baseDir?: string }, problems: ConfigProblems): Promise<SkeinConfig> {
  const { value, whole } = substituteEnv(raw, options.env ?? process.env, problems);
  const parsed = (await fileSchema()).safeParse(value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.add(formatPath(issue.path as ConfigPath), issue.message);
    return {};
  }
  const file = parsed.data as SkeinConfigFile;
  const plugins: SkeinPlugin[] = [];
  for (const [id, settings] of Object.entries(file.plugins ?? {})) {
    const base = ['plugins', id];
    const plugin = await instantiatePlugin(id, settings ?? {}, substitutionsUnder(whole, base), options.baseDir ?? process.cwd(), problems);
    if (plugin) plugins.push(plugin);
  }
  for (const [name, agent] of Object.entries(file.agents ?? {})) {
    coerceSubstitutions(agent, substitutionsUnder(whole, ['agents', name]), agentKeyType, problems, ['agents', name]);
  }
  return { plugins, agents: file.agents };
}

async function instantiatePlugin(
  id: string,
  settings: Record<string, unknown>,
  substitutions: readonly WholeSubstitution[],
  baseDir: string,
  problems: ConfigProblems,
): Promise<SkeinPlugin | undefined> {
  const at = `plugins.${id}`;
  const { module: moduleName, export: exportName, ...pluginSettings } = settings as { module?: unknown; export?: unknown };
  const builtin = BUILTIN_PLUGINS[id];
  const specifier = typeof moduleName === 'string' ? moduleName : builtin?.module;
  if (!specifier) {
    const like = closestBuiltin(id);
    problems.add(
      at,
      `unknown plugin "${id}"${like ? `; did you mean "${like}"?` : ''} Built-in plugins: ${Object.keys(BUILTIN_PLUGINS).join(', ')}. For a third-party plugin add "module: <package or path>".`,
    );
    // A misspelt built-in would have provided its clients; an unknown id provides nothing.
    problems.pluginFailed({ id, clients: like ? BUILTIN_PLUGINS[like]!.clients ?? [] : [], stores: like ? BUILTIN_PLUGINS[like]!.stores ?? [] : [] });
    return undefined;
  }
  const failed = (factory?: PluginFactory) =>
    problems.pluginFailed({ id, clients: factory?.clients ?? (moduleName === undefined ? (builtin?.clients ?? []) : undefined), stores: factory?.stores ?? (moduleName === undefined ? (builtin?.stores ?? []) : undefined) });
  let loaded: Record<string, unknown>;
  try {
    loaded = await importPlugin(specifier, baseDir);
  } catch (error) {
    problems.add(`${at}.module`, `cannot import "${specifier}": ${(error as Error).message}`);
    failed();
    return undefined;
  }
  const name = typeof exportName === 'string' ? exportName : (builtin?.export ?? 'default');
  const factory = loaded[name];
  if (typeof factory !== 'function') {
    problems.add(`${at}.export`, `"${specifier}" has no plugin factory function named "${name}".`);
    failed();
    return undefined;
  }
  const pluginFactory = factory as PluginFactory;
  const declared = pluginFactory.configSchema;
  const schema = typeof declared === 'function' ? await declared() : declared;
  coerceSubstitutions(pluginSettings, substitutions, (p) => (schema ? expectedTypeInZod(schema, p) : undefined), problems, ['plugins', id]);
  if (schema) {
    const check = schema.safeParse(pluginSettings);
    if (!check.success) for (const issue of check.error.issues) problems.add(formatPath(['plugins', id, ...(issue.path as ConfigPath)]), issue.message);
  }
  if (problems.anyAt(at)) {
    failed(pluginFactory);
    return undefined;
  }
  try {
    return pluginFactory(pluginSettings);
  } catch (error) {
    problems.add(at, (error as Error).message);
    failed(pluginFactory);
    return undefined;
  }
}

/**
 * Imports a plugin module. A path is relative to the config file's folder; a package name is
 * resolved from there too (the app's node_modules, as an import written in that folder would),
 * and only when no such package is there, from where Skein is installed.
 */
async function importPlugin(specifier: string, baseDir: string): Promise<Record<string, unknown>> {
  if (!isBareSpecifier(specifier)) {
    const url = /^[a-zA-Z][a-zA-Z\d+.-]*:/.test(specifier) && !path.isAbsolute(specifier) ? specifier : pathToFileURL(path.resolve(baseDir, specifier)).href;
    return (await import(url)) as Record<string, unknown>;
  }
  if (specifier === 'skein' || specifier.startsWith('skein/')) return (await import(specifier)) as Record<string, unknown>;
  const file = resolvePackageFrom(specifier, baseDir);
  if (file) return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  try {
    return (await import(specifier)) as Record<string, unknown>;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND' || !String((error as Error).message).includes(`'${packageName(specifier)}'`)) throw error;
    throw new Error(
      `no package "${packageName(specifier)}" in node_modules of ${baseDir} (the config file's folder) or any folder above it, nor where Skein is installed. Install it in your app (npm install ${packageName(specifier)}) or give a path.`,
      { cause: error },
    );
  }
}

function packageName(specifier: string): string {
  return specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
}

/** The built-in id within two edits of `id` (a typo), if exactly one is. */
function closestBuiltin(id: string): string | undefined {
  const close = Object.keys(BUILTIN_PLUGINS).filter((name) => editDistance(name, id.toLowerCase()) <= 2);
  return close.length === 1 ? close[0] : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}
