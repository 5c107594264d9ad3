import { type SkeinPlugin, storePlugin } from 'skein';
import { REDIS_STORE_ID, RedisChatMessageStoreFactory, type RedisStoreOptions } from './redis-chat-message-store.js';

/**
 * The Redis store plugin: binds `RedisChatMessageStoreFactory` as the ChatMessageStoreFactory
 * named `redis` and contributes its thread serializer. Agents use it with `messageStore: 'redis'`.
 * It connects on first use; close it with `container.get(RedisChatMessageStoreFactory).close()`.
 */
export function redisStorePlugin(options: RedisStoreOptions = {}): SkeinPlugin {
  return storePlugin({
    id: REDIS_STORE_ID,
    factoryType: RedisChatMessageStoreFactory,
    create: () => new RedisChatMessageStoreFactory(options),
    // Messages read back are checked against every content kind the container knows.
    adoptRegistry: options.serializationRegistry ? undefined : (factory, registry) => (factory.serializationRegistry = registry),
  });
}
