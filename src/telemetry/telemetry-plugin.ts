import { z } from 'zod';
import { AgentRunMiddleware, ChatClientMiddleware, FunctionCallMiddleware } from '../agents/middleware.js';
import type { SkeinPlugin } from '../container/skein-plugin.js';
import { containerModule } from '../container/inversify-runtime.js';
import { TelemetryMiddleware, TelemetryOptions } from './telemetry-middleware.js';

export const TELEMETRY_PLUGIN_ID = 'telemetry';

/**
 * Instruments every agent the container builds: binds one TelemetryMiddleware into the run,
 * function-call and chat-client contribution points. ChatAgents get run, chat and tool spans;
 * Assistants agents run and tool spans, A2A agents run spans (their model calls happen on the
 * service, out of sight). List it before other plugins that contribute middleware so its spans
 * wrap theirs.
 */
export function telemetryPlugin(options: TelemetryOptions = {}): SkeinPlugin {
  return {
    id: TELEMETRY_PLUGIN_ID,
    module: containerModule(({ bind }) => {
      bind<TelemetryOptions>(TelemetryOptions).toConstantValue(options);
      bind(TelemetryMiddleware)
        .toDynamicValue((context) => new TelemetryMiddleware(context.get<TelemetryOptions>(TelemetryOptions)))
        .inSingletonScope();
      bind(AgentRunMiddleware).toService(TelemetryMiddleware);
      bind(FunctionCallMiddleware).toService(TelemetryMiddleware);
      bind(ChatClientMiddleware).toService(TelemetryMiddleware);
    }),
  };
}

/** What a config file may set: `plugins: { telemetry: { captureContent: true } }`. */
telemetryPlugin.configSchema = z
  .object({
    captureContent: z.boolean().optional(),
    tracerName: z.string().min(1).optional(),
  })
  .strict();
