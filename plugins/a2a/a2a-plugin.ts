import type { ResolutionContext } from 'inversify';
import { AgentFactory, containerModule, type AgentConfig, AgentRunMiddleware, ChannelProvider, ConfigurationError, type SkeinPlugin } from 'skein';
import { A2AChannelProvider } from './a2a-channel.js';
import { A2AAgent, type A2AAgentOptions } from './a2a-agent.js';
import { A2AContextStore, InMemoryA2AContextStore } from './a2a-context-store.js';
import { A2A_PROVIDER_ID } from './a2a-errors.js';

/** Defaults for every A2A agent the container builds (each agent's config may override `headers`, `mode`, `pollIntervalMs`). */
export type A2APluginOptions = Pick<A2AAgentOptions, 'fetch' | 'headers' | 'credentials' | 'mode' | 'pollIntervalMs' | 'clientFactory' | 'grpc'>;

/**
 * The A2A plugin: agents with `client: 'a2a'` and a `url` (the remote agent card) are A2AAgents,
 * wrapped by the container's agent-run middleware contributions (e.g. telemetryPlugin's);
 * `A2AContextStore` defaults to an in-memory store for an A2AServer built from the container.
 */
export function a2aPlugin(options: A2APluginOptions = {}): SkeinPlugin {
  return {
    id: 'a2a',
    clients: [A2A_PROVIDER_ID],
    module: containerModule(({ bind }) => {
      bind(InMemoryA2AContextStore).toSelf().inSingletonScope();
      bind<A2AContextStore>(A2AContextStore).toService(InMemoryA2AContextStore);
      bind<AgentFactory>(AgentFactory)
        .toConstantValue({ createAgent: (name, config, context) => createA2AAgent(name, config, options, context) })
        .whenNamed(A2A_PROVIDER_ID);
      bind<ChannelProvider>(ChannelProvider).toConstantValue(new A2AChannelProvider());
    }),
  };
}

function createA2AAgent(name: string, config: AgentConfig, defaults: A2APluginOptions, context: ResolutionContext): A2AAgent {
  const url = config.url;
  if (typeof url !== 'string' || url === '') {
    throw new ConfigurationError(`agents.${name}.url: an "a2a" agent needs the remote agent card URL, e.g. url: "https://host/.well-known/agent-card.json".`);
  }
  const mode = config.mode;
  if (mode !== undefined && mode !== 'auto' && mode !== 'stream' && mode !== 'poll') {
    throw new ConfigurationError(`agents.${name}.mode: expected "auto", "stream" or "poll", found ${JSON.stringify(mode)}.`);
  }
  const headers = config.headers as Record<string, string> | undefined;
  return new A2AAgent({
    ...defaults,
    url,
    name: config.name ?? name,
    description: config.description,
    headers: headers ? { ...defaults.headers, ...headers } : defaults.headers,
    mode: mode ?? defaults.mode,
    pollIntervalMs: typeof config.pollIntervalMs === 'number' ? config.pollIntervalMs : defaults.pollIntervalMs,
    concurrency: config.concurrency,
    middleware: { agentRun: context.getAll<AgentRunMiddleware>(AgentRunMiddleware, { optional: true }) },
  });
}
