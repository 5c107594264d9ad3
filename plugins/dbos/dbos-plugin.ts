import type { ZodType } from 'zod';
import { DurableRunner, type SkeinPlugin, containerModule } from 'skein';
import { DbosDurableRunner, type DbosRunnerOptions } from './dbos-durable-runner.js';

export const DBOS_ENGINE_ID = 'dbos';

/**
 * The DBOS plugin: binds one `DbosDurableRunner` (DBOS is one per process), as the DurableRunner
 * named `dbos`. Agents with `durability: { engine: 'dbos' }` in their config get a durable face
 * under `durableAgentToken(name)`; resolve every one of them before `launch()`.
 *
 * @example
 * ```ts
 * const container = createContainer({
 *   plugins: [openaiPlugin(), postgresStorePlugin({ connectionString }), dbosPlugin({ systemDatabaseUrl: connectionString })],
 *   agents: { researcher: { client: 'openai-responses', model: 'gpt-4.1', durability: { engine: 'dbos' } } },
 * });
 * const researcher = container.get(durableAgentToken('researcher'));
 * await container.get(DbosDurableRunner).launch();
 * ```
 */
export function dbosPlugin(options: DbosRunnerOptions): SkeinPlugin {
  const runner = new DbosDurableRunner(options);
  return {
    id: DBOS_ENGINE_ID,
    durableEngines: [DBOS_ENGINE_ID],
    module: containerModule(({ bind }) => {
      bind(DbosDurableRunner).toConstantValue(runner);
      bind<DurableRunner>(DurableRunner).toService(DbosDurableRunner);
    }),
  };
}

/** Settings a config file may give the plugin (`plugins: { dbos: { systemDatabaseUrl, ... } }`), checked with their paths. */
dbosPlugin.configSchema = async (): Promise<ZodType> => {
  const { z } = await import('zod');
  const count = z.number().int().positive();
  const queue = z
    .object({ concurrency: count.optional(), workerConcurrency: count.optional(), rateLimit: z.object({ limit: count, periodSec: z.number().positive() }).strict().optional(), partitionConcurrency: count.optional() })
    .strict();
  return z
    .object({
      systemDatabaseUrl: z.string().regex(/^postgres(ql)?:\/\//, 'a PostgreSQL URL such as postgres://user@host:5432/app'),
      schema: z.string().min(1).optional(),
      name: z.string().min(1).optional(),
      applicationVersion: z.string().min(1).optional(),
      queues: z.record(z.string().min(1), queue).optional(),
      executorId: z.string().min(1).optional(),
      logLevel: z.string().min(1).optional(),
      pollingIntervalMs: count.optional(),
      outageTimeoutMs: count.optional(),
    })
    .strict();
};
