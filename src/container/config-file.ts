import { ConfigurationError } from '../errors/skein-error.js';
import { ConfigProblems } from './config-problems.js';
import { readConfigFileChecked, resolveConfigContent } from './config-file-reader.js';
import type { SkeinConfig } from './skein-config.js';

export { BUILTIN_PLUGINS, type BuiltinPlugin } from './builtin-plugins.js';
export type { PluginFactory, SkeinConfigFile } from './skein-config-file.js';

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
