import { type SkeinPlugin, versionedStorePlugin } from 'skein';
import type { ZodType } from 'zod';
import { POSTGRES_STORE_ID, PostgresChatMessageStoreFactory, type PostgresStoreOptions } from './postgres-chat-message-store.js';

/**
 * The PostgreSQL store plugin: binds `PostgresChatMessageStoreFactory` as the ChatMessageStoreFactory
 * named `postgres` and contributes its thread serializer. Agents use it with `messageStore: 'postgres'`.
 * Create the schema once with `await container.get(PostgresChatMessageStoreFactory).migrate()`;
 * end the pool with `close()`. After its first successful call it checks the session's durability
 * settings and warns once (through the container's `StoreLogger` when bound) if acknowledged turns
 * could be lost; see docs/stores.md.
 *
 * @example
 * ```ts
 * const container = createContainer({
 *   plugins: [openaiPlugin(), postgresStorePlugin({ connectionString: process.env.DATABASE_URL, schema: 'skein' })],
 *   agents: { support: { client: 'openai-chat', model: 'gpt-4o-mini', messageStore: 'postgres' } },
 * });
 * await container.get(PostgresChatMessageStoreFactory).migrate();
 * ```
 */
export function postgresStorePlugin(options: PostgresStoreOptions): SkeinPlugin {
  return versionedStorePlugin({ id: POSTGRES_STORE_ID, factoryType: PostgresChatMessageStoreFactory, create: () => new PostgresChatMessageStoreFactory(options), options });
}

/** Settings a config file may give the plugin (checked, with their paths, before anything is built). */
postgresStorePlugin.configSchema = async (): Promise<ZodType> => {
  const { z } = await import('zod');
  return z
    .object({
      connectionString: z.string().min(1).optional(),
      schema: z.string().min(1).optional(),
      maxMessages: z.number().int().positive().optional(),
      ttlSeconds: z.number().positive().optional(),
      maxConnections: z.number().int().positive().optional(),
      connectTimeoutMs: z.number().int().positive().optional(),
      durabilityCheck: z.boolean().optional(),
    })
    .strict();
};
