import { ContainerModule } from 'inversify';
import { ChatMessageStoreFactory, SerializationRegistry, type SkeinPlugin, StoreThreadSerializer, ThreadSerializer } from 'skein';
import { POSTGRES_STORE_ID, PostgresChatMessageStoreFactory, type PostgresStoreOptions } from './postgres-chat-message-store.js';

/**
 * The PostgreSQL store plugin: binds `PostgresChatMessageStoreFactory` as the ChatMessageStoreFactory
 * named `postgres` and contributes its thread serializer. Agents use it with `messageStore: 'postgres'`.
 * Create the schema once with `await container.get(PostgresChatMessageStoreFactory).migrate()`;
 * end the pool with `close()`.
 */
export function postgresStorePlugin(options: PostgresStoreOptions): SkeinPlugin {
  return {
    id: POSTGRES_STORE_ID,
    stores: [POSTGRES_STORE_ID],
    module: new ContainerModule(({ bind, onActivation }) => {
      bind(PostgresChatMessageStoreFactory)
        .toDynamicValue(() => new PostgresChatMessageStoreFactory(options))
        .inSingletonScope();
      bind<ChatMessageStoreFactory>(ChatMessageStoreFactory)
        .toDynamicValue((context) => context.get(PostgresChatMessageStoreFactory))
        .whenNamed(POSTGRES_STORE_ID);
      bind<ThreadSerializer>(ThreadSerializer)
        .toDynamicValue((context) => new StoreThreadSerializer(context.get(PostgresChatMessageStoreFactory)))
        .inSingletonScope();
      // Messages read back are checked against every content kind the container knows.
      onActivation<SerializationRegistry>(SerializationRegistry, (context, registry) => {
        if (!options.serializationRegistry) context.get(PostgresChatMessageStoreFactory).serializationRegistry = registry;
        return registry;
      });
    }),
  };
}
