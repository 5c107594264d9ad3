import type { z } from 'zod';
import type { AgentConfig } from './skein-config.js';
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
  /** Tool reference prefixes the plugin resolves (`mcp` for `mcp:files`). */
  toolPrefixes?: readonly string[];
};

/** What a config file holds (after `${ENV}` interpolation). */
export interface SkeinConfigFile {
  /** Plugin id -> settings. Third-party plugins add `module` (package or path) and optionally `export`. */
  plugins?: Record<string, Record<string, unknown> | null>;
  agents?: Record<string, AgentConfig>;
}
