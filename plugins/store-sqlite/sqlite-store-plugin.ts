import { ContainerModule } from 'inversify';
import { ChatMessageStoreFactory, SerializationRegistry, type SkeinPlugin, StoreThreadSerializer, ThreadSerializer } from 'skein';
import { SQLITE_STORE_ID, SqliteChatMessageStoreFactory, type SqliteStoreOptions } from './sqlite-chat-message-store.js';

/**
 * The SQLite store plugin: binds `SqliteChatMessageStoreFactory` as the ChatMessageStoreFactory
 * named `sqlite` and contributes its thread serializer. Agents use it with `messageStore: 'sqlite'`.
 */
export function sqliteStorePlugin(options: SqliteStoreOptions): SkeinPlugin {
  return {
    id: SQLITE_STORE_ID,
    stores: [SQLITE_STORE_ID],
    module: new ContainerModule(({ bind, onActivation }) => {
      bind(SqliteChatMessageStoreFactory)
        .toDynamicValue(() => new SqliteChatMessageStoreFactory(options))
        .inSingletonScope();
      bind<ChatMessageStoreFactory>(ChatMessageStoreFactory)
        .toDynamicValue((context) => context.get(SqliteChatMessageStoreFactory))
        .whenNamed(SQLITE_STORE_ID);
      bind<ThreadSerializer>(ThreadSerializer)
        .toDynamicValue((context) => new StoreThreadSerializer(context.get(SqliteChatMessageStoreFactory)))
        .inSingletonScope();
      // Messages read back are checked against every content kind the container knows.
      onActivation<SerializationRegistry>(SerializationRegistry, (context, registry) => {
        if (!options.serializationRegistry) context.get(SqliteChatMessageStoreFactory).serializationRegistry = registry;
        return registry;
      });
    }),
  };
}
