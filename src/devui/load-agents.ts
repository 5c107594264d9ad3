import type { Container } from 'inversify';
import type { TracerProvider } from '@opentelemetry/api';
import { readConfigFile } from '../container/config-file.js';
import { createContainer } from '../container/create-container.js';
import type { SkeinConfig } from '../container/skein-config.js';
import { ConfigurationError } from '../errors/skein-error.js';
import type { TelemetryOptions } from '../telemetry/telemetry-middleware.js';
import type { telemetryPlugin } from '../telemetry/telemetry-plugin.js';
import type { AgentInfo } from './devui-api-types.js';
import { TurnTraces } from './turn-traces.js';

/** What the Dev UI needs to keep turn traces: its collector, its provider, and the telemetry plugin's parts. */
export interface TraceSetup {
  collector: TurnTraces;
  provider: TracerProvider;
  telemetryPlugin: typeof telemetryPlugin;
  pluginId: string;
  optionsToken: symbol;
}

/**
 * The Dev UI's own tracer provider with the turn-trace collector on it. The OpenTelemetry SDK and
 * Skein's telemetry module (which needs @opentelemetry/api) are optional peers, loaded only here:
 * without them the Dev UI runs, without traces — and the CLI that imports this file starts.
 */
export async function traceCollector(): Promise<TraceSetup | undefined> {
  try {
    const [{ BasicTracerProvider }, plugin, middleware] = await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('../telemetry/telemetry-plugin.js'),
      import('../telemetry/telemetry-middleware.js'),
    ]);
    const collector = new TurnTraces();
    return {
      collector,
      provider: new BasicTracerProvider({ spanProcessors: [collector] }),
      telemetryPlugin: plugin.telemetryPlugin,
      pluginId: plugin.TELEMETRY_PLUGIN_ID,
      optionsToken: middleware.TelemetryOptions,
    };
  } catch {
    return undefined;
  }
}

/** The Dev UI's own container over the config, with telemetry pointed at its trace collector, and the configured agents. */
export async function loadAgents(
  config: string | SkeinConfig,
  env: NodeJS.ProcessEnv | undefined,
  traces: TraceSetup | undefined,
  captureContent: boolean | undefined,
): Promise<{ container: Container; agents: Map<string, AgentInfo>; captureContent: boolean }> {
  let resolved: SkeinConfig;
  if (typeof config === 'string') {
    // readConfigFile + createContainer(config) is what createContainer(file) does; it also gives us the agent names.
    const { config: fileConfig, problems } = await readConfigFile(config, env);
    if (problems.length) throw new ConfigurationError(problems);
    resolved = fileConfig;
  } else {
    resolved = config;
  }
  // Telemetry goes first (its spans wrap other middleware); a configured one is kept and pointed at the Dev UI's provider too.
  const configured = traces ? (resolved.plugins?.some((plugin) => plugin.id === traces.pluginId) ?? false) : false;
  if (traces && !configured) resolved = { ...resolved, plugins: [traces.telemetryPlugin(), ...(resolved.plugins ?? [])] };
  const container = createContainer(resolved);
  let capturing = false;
  if (traces && container.isBound(traces.optionsToken)) {
    const options = container.get<TelemetryOptions>(traces.optionsToken);
    capturing = captureContent ?? options.captureContent ?? process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.toLowerCase() === 'true';
    container.rebind<TelemetryOptions>(traces.optionsToken).toConstantValue({ ...options, tracerProvider: traces.provider, captureContent: capturing });
  }
  const agents = new Map<string, AgentInfo>();
  for (const [name, agentConfig] of Object.entries(resolved.agents ?? {})) {
    agents.set(name, { name, displayName: agentConfig.name, description: agentConfig.description, client: agentConfig.client, ...(agentConfig.durability ? { durable: true } : {}) });
  }
  return { container, agents, captureContent: capturing };
}
