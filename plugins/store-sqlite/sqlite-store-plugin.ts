import { type SkeinPlugin, storePlugin } from 'skein';
import { SQLITE_STORE_ID, SqliteChatMessageStoreFactory, type SqliteStoreOptions } from './sqlite-chat-message-store.js';

/**
 * The SQLite store plugin: binds `SqliteChatMessageStoreFactory` as the ChatMessageStoreFactory
 * named `sqlite` and contributes its thread serializer. Agents use it with `messageStore: 'sqlite'`.
 */
export function sqliteStorePlugin(options: SqliteStoreOptions): SkeinPlugin {
  return storePlugin({
    id: SQLITE_STORE_ID,
    factoryType: SqliteChatMessageStoreFactory,
    create: () => new SqliteChatMessageStoreFactory(options),
    // Messages read back are checked against every content kind the container knows.
    adoptRegistry: options.serializationRegistry ? undefined : (factory, registry) => (factory.serializationRegistry = registry),
  });
}
