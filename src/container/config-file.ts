import type { z } from 'zod';
import { ConfigurationError } from '../errors/skein-error.js';
import { ConfigProblems } from './config-problems.js';
import { readConfigFileChecked, resolveConfigContent } from './config-file-reader.js';
import type { AgentConfig, SkeinConfig } from './skein-config.js';
import type { SkeinPlugin } from './skein-plugin.js';

export { BUILTIN_PLUGINS, type BuiltinPlugin } from './builtin-plugins.js';

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
  /** Tool reference prefixes the plugin resolves (`mcp` for `mcp:files`). */
  toolPrefixes?: readonly string[];
};

/** What a config file holds (after `${ENV}` interpolation). */
export interface SkeinConfigFile {
  /** Plugin id -> settings. Third-party plugins add `module` (package or path) and optionally `export`. */
  plugins?: Record<string, Record<string, unknown> | null>;
  agents?: Record<string, AgentConfig>;
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
