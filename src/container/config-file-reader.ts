import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigurationError } from '../errors/skein-error.js';
import { agentKeyType } from './agent-config-rules.js';
import { BUILTIN_PLUGINS } from './builtin-plugins.js';
import type { PluginFactory, SkeinConfigFile } from './skein-config-file.js';
import { ConfigProblems, type FailedPlugin } from './config-problems.js';
import { coerceSubstitutions, type ConfigPath, formatPath, substituteEnv, substitutionsUnder, type WholeSubstitution } from './env-substitution.js';
import { importPlugin } from './plugin-import.js';
import { isSkeinPlugin, NOT_A_PLUGIN } from './plugin-shape.js';
import type { SkeinConfig } from './skein-config.js';
import type { SkeinPlugin } from './skein-plugin.js';
import { expectedTypeInZod } from './zod-expected-type.js';

// How a config file becomes a SkeinConfig; the public entry points are in config-file.ts.

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

/** Interpolates, types, checks and instantiates already-parsed config content, adding to `problems`. */
export async function resolveConfigContent(raw: unknown, options: { env?: NodeJS.ProcessEnv; baseDir?: string }, problems: ConfigProblems): Promise<SkeinConfig> {
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

/** A plugin entry of the file, from its module to a built SkeinPlugin; every failure is a problem at its path. */
async function instantiatePlugin(
  id: string,
  settings: Record<string, unknown>,
  substitutions: readonly WholeSubstitution[],
  baseDir: string,
  problems: ConfigProblems,
): Promise<SkeinPlugin | undefined> {
  const at = `plugins.${id}`;
  const { module: moduleName, export: exportName, ...pluginSettings } = settings as { module?: unknown; export?: unknown };
  const found = await findFactory(id, moduleName, exportName, baseDir, problems);
  if (found) {
    const { factory, describe } = found;
    // `module` and `export` were read as strings above; they are not settings of the plugin.
    await checkSettings(['plugins', id], factory, pluginSettings, substitutions.filter((sub) => sub.path[2] !== 'module' && sub.path[2] !== 'export'), problems);
    const plugin = problems.anyAt(at) ? undefined : buildPlugin(at, factory, pluginSettings, describe, problems);
    if (plugin) return plugin;
  }
  problems.pluginFailed({ id, ...whatItProvides(id, moduleName, found?.factory) });
  return undefined;
}

/** The factory a plugin entry names: a built-in by id, else `module` (+ `export`). */
async function findFactory(
  id: string,
  moduleName: unknown,
  exportName: unknown,
  baseDir: string,
  problems: ConfigProblems,
): Promise<{ factory: PluginFactory; describe: string } | undefined> {
  const at = `plugins.${id}`;
  const builtin = BUILTIN_PLUGINS[id];
  const specifier = typeof moduleName === 'string' ? moduleName : builtin?.module;
  if (!specifier) {
    const like = closestBuiltin(id);
    problems.add(
      at,
      `unknown plugin "${id}"${like ? `; did you mean "${like}"?` : ''} Built-in plugins: ${Object.keys(BUILTIN_PLUGINS).join(', ')}. For a third-party plugin add "module: <package or path>".`,
    );
    return undefined;
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = await importPlugin(specifier, baseDir);
  } catch (error) {
    problems.add(`${at}.module`, `cannot import "${specifier}": ${(error as Error).message}`);
    return undefined;
  }
  const name = typeof exportName === 'string' ? exportName : (builtin?.export ?? 'default');
  const factory = loaded[name];
  if (typeof factory !== 'function') {
    problems.add(`${at}.export`, `"${specifier}" has no plugin factory function named "${name}".`);
    return undefined;
  }
  return { factory: factory as PluginFactory, describe: `"${name}" of "${specifier}"` };
}

/** Types the settings' `${VAR}` values by the factory's schema, then checks them against it. */
async function checkSettings(base: ConfigPath, factory: PluginFactory, settings: Record<string, unknown>, substitutions: readonly WholeSubstitution[], problems: ConfigProblems): Promise<void> {
  const declared = factory.configSchema;
  const schema = typeof declared === 'function' ? await declared() : declared;
  coerceSubstitutions(settings, substitutions, (p) => (schema ? expectedTypeInZod(schema, p) : undefined), problems, base);
  const check = schema?.safeParse(settings);
  if (check && !check.success) for (const issue of check.error.issues) problems.add(formatPath([...base, ...(issue.path as ConfigPath)]), issue.message);
}

function buildPlugin(at: string, factory: PluginFactory, settings: Record<string, unknown>, describe: string, problems: ConfigProblems): SkeinPlugin | undefined {
  let plugin: unknown;
  try {
    plugin = factory(settings);
  } catch (error) {
    problems.add(at, (error as Error).message);
    return undefined;
  }
  if (isSkeinPlugin(plugin)) return plugin;
  problems.add(at, `${describe} returned no plugin: ${NOT_A_PLUGIN}`);
  return undefined;
}

/**
 * What a plugin that failed would have provided: what its factory declares, or the built-in
 * table's entry; a misspelt built-in id counts as that built-in; an unknown id provides nothing;
 * a module that never loaded, or a factory that declares nothing, is unknown (`undefined`).
 */
function whatItProvides(id: string, moduleName: unknown, factory: PluginFactory | undefined): Omit<FailedPlugin, 'id'> {
  if (factory?.clients || factory?.stores) return { clients: factory.clients ?? [], stores: factory.stores ?? [], toolPrefixes: factory.toolPrefixes ?? [] };
  if (moduleName !== undefined) return {};
  const builtin = BUILTIN_PLUGINS[id] ?? BUILTIN_PLUGINS[closestBuiltin(id) ?? ''];
  return { clients: builtin?.clients ?? [], stores: builtin?.stores ?? [], toolPrefixes: builtin?.toolPrefixes ?? [] };
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
