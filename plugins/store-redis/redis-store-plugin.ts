import { type SkeinPlugin, versionedStorePlugin } from 'skein';
import type { ZodType } from 'zod';
import { REDIS_STORE_ID, RedisChatMessageStoreFactory, type RedisStoreOptions } from './redis-chat-message-store.js';

/**
 * The Redis store plugin: binds `RedisChatMessageStoreFactory` as the ChatMessageStoreFactory
 * named `redis` and contributes its thread serializer. Agents use it with `messageStore: 'redis'`.
 * It connects on first use; close it with `container.get(RedisChatMessageStoreFactory).close()`.
 * After its first successful call it checks the server's persistence and warns once (through the
 * container's `StoreLogger` when bound) if acknowledged turns could be lost; see docs/stores.md.
 *
 * @example
 * ```ts
 * const container = createContainer({
 *   plugins: [openaiPlugin(), redisStorePlugin({ url: 'redis://127.0.0.1:6379', ttlSeconds: 86_400 })],
 *   agents: { support: { client: 'openai-chat', model: 'gpt-4o-mini', messageStore: 'redis' } },
 * });
 * ```
 */
export function redisStorePlugin(options: RedisStoreOptions = {}): SkeinPlugin {
  return versionedStorePlugin({ id: REDIS_STORE_ID, factoryType: RedisChatMessageStoreFactory, create: () => new RedisChatMessageStoreFactory(options), options });
}

/** Settings a config file may give the plugin (checked, with their paths, before anything is built). */
redisStorePlugin.configSchema = async (): Promise<ZodType> => {
  const { z } = await import('zod');
  return z
    .object({
      url: z.string().min(1).optional(),
      keyPrefix: z.string().optional(),
      maxMessages: z.number().int().positive().optional(),
      ttlSeconds: z.number().int().positive().optional(),
      connectTimeoutMs: z.number().int().positive().optional(),
      commandTimeoutMs: z.number().int().positive().optional(),
      durabilityCheck: z.boolean().optional(),
    })
    .strict();
};
