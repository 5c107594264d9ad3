import { ContainerModule } from 'inversify';
import { ChatMessageStoreFactory, SerializationRegistry, type SkeinPlugin, StoreThreadSerializer, ThreadSerializer } from 'skein';
import { REDIS_STORE_ID, RedisChatMessageStoreFactory, type RedisStoreOptions } from './redis-chat-message-store.js';

/**
 * The Redis store plugin: binds `RedisChatMessageStoreFactory` as the ChatMessageStoreFactory
 * named `redis` and contributes its thread serializer. Agents use it with `messageStore: 'redis'`.
 * It connects on first use; close it with `container.get(RedisChatMessageStoreFactory).close()`.
 */
export function redisStorePlugin(options: RedisStoreOptions = {}): SkeinPlugin {
  return {
    id: REDIS_STORE_ID,
    stores: [REDIS_STORE_ID],
    module: new ContainerModule(({ bind, onActivation }) => {
      bind(RedisChatMessageStoreFactory)
        .toDynamicValue(() => new RedisChatMessageStoreFactory(options))
        .inSingletonScope();
      bind<ChatMessageStoreFactory>(ChatMessageStoreFactory)
        .toDynamicValue((context) => context.get(RedisChatMessageStoreFactory))
        .whenNamed(REDIS_STORE_ID);
      bind<ThreadSerializer>(ThreadSerializer)
        .toDynamicValue((context) => new StoreThreadSerializer(context.get(RedisChatMessageStoreFactory)))
        .inSingletonScope();
      // Messages read back are checked against every content kind the container knows.
      onActivation<SerializationRegistry>(SerializationRegistry, (context, registry) => {
        if (!options.serializationRegistry) context.get(RedisChatMessageStoreFactory).serializationRegistry = registry;
        return registry;
      });
    }),
  };
}
