import type { ZodType } from 'zod';
import { AgentFactory, ChannelProvider, ConfigurationError, type SkeinPlugin, containerModule } from 'skein';
import { AG_UI_PROVIDER_ID, AgUiAgent } from './ag-ui-agent.js';
import { AgUiChannelProvider } from './ag-ui-channel.js';
import type { AgUiPredictState } from './ag-ui-predict-state.js';

/** What `plugins.ag-ui.server` says about serving the container's agents (`skein ag-ui serve`). */
export interface AgUiServeSettings {
  /** The agents to serve (names under `agents:`); all of them by default. */
  agents?: string[];
  /** Path prefix (default `/agents`): each agent at `<basePath>/<name>`. */
  basePath?: string;
  port?: number;
  host?: string;
  /** Listen on a non-loopback host on purpose. */
  expose?: boolean;
  /** Origins whose pages may call the server (CORS). */
  corsOrigins?: string[];
  /** Hosts accepted in `Host` besides loopback. */
  allowedHosts?: string[];
  maxBodyBytes?: number;
  /** Where thread records are kept (default `.skein/ag-ui-threads`). */
  threadsDir?: string;
  keepPartial?: boolean;
  /** Predictive state updates per served agent (docs/ag-ui.md): `{ <agent>: [{ stateKey, tool, toolArgument }] }`. */
  predictState?: Record<string, AgUiPredictState[]>;
}

/** The `plugins.ag-ui` settings, bound in the container for `skein ag-ui serve` and apps to read. */
export const AgUiPluginSettings = Symbol('AgUiPluginSettings');
export interface AgUiPluginSettings {
  server?: AgUiServeSettings;
}

export type AgUiPluginOptions = AgUiPluginSettings;

/**
 * The AG-UI plugin: `client: ag-ui` agents (a remote AG-UI agent at `url`) and the settings of
 * `skein ag-ui serve` (`plugins.ag-ui.server`).
 *
 * @example
 * const container = await createContainer({ plugins: [openaiPlugin(), agUiPlugin({ server: { corsOrigins: ['http://localhost:5173'] } })], agents: { helper: { client: 'openai-chat', model: 'gpt-4.1' } } });
 */
export function agUiPlugin(options: AgUiPluginOptions = {}): SkeinPlugin {
  return {
    id: 'ag-ui',
    clients: [AG_UI_PROVIDER_ID],
    module: containerModule(({ bind }) => {
      bind<AgUiPluginSettings>(AgUiPluginSettings).toConstantValue(options);
      bind<ChannelProvider>(ChannelProvider).toConstantValue(new AgUiChannelProvider());
      // `client: ag-ui` agents: a remote AG-UI agent at `url` (with optional `headers`).
      bind<AgentFactory>(AgentFactory)
        .toConstantValue({
          createAgent: (name, config) => {
            if (typeof config.url !== 'string' || !/^https?:\/\//.test(config.url)) {
              throw new ConfigurationError(`agents.${name}.url: an "ag-ui" agent needs the remote agent's endpoint, e.g. url: "http://127.0.0.1:8000/agents/helper"; found ${JSON.stringify(config.url)}.`);
            }
            return new AgUiAgent({ url: config.url, headers: config.headers as Record<string, string> | undefined, name: config.name ?? name, description: config.description });
          },
        })
        .whenNamed(AG_UI_PROVIDER_ID);
    }),
  };
}

/** Settings a config file may give the plugin (checked, with their paths, before anything is built). */
agUiPlugin.configSchema = async (): Promise<ZodType> => {
  const { z } = await import('zod');
  const names = z.array(z.string().min(1));
  return z
    .object({
      server: z
        .object({
          agents: names.optional(),
          basePath: z.string().regex(/^(\/[A-Za-z0-9_.-]+)*\/?$/, 'a path such as /agents').optional(),
          port: z.number().int().min(0).max(65535).optional(),
          host: z.string().min(1).optional(),
          expose: z.boolean().optional(),
          corsOrigins: z.array(z.url({ protocol: /^https?$/ })).optional(),
          allowedHosts: names.optional(),
          maxBodyBytes: z.number().int().positive().optional(),
          threadsDir: z.string().min(1).optional(),
          keepPartial: z.boolean().optional(),
          predictState: z.record(z.string().min(1), z.array(z.object({ stateKey: z.string().min(1), tool: z.string().min(1), toolArgument: z.string().min(1) }).strict())).optional(),
        })
        .strict()
        .optional(),
    })
    .strict();
};
