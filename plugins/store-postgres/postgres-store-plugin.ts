import { type SkeinPlugin, storePlugin } from 'skein';
import { POSTGRES_STORE_ID, PostgresChatMessageStoreFactory, type PostgresStoreOptions } from './postgres-chat-message-store.js';

/**
 * The PostgreSQL store plugin: binds `PostgresChatMessageStoreFactory` as the ChatMessageStoreFactory
 * named `postgres` and contributes its thread serializer. Agents use it with `messageStore: 'postgres'`.
 * Create the schema once with `await container.get(PostgresChatMessageStoreFactory).migrate()`;
 * end the pool with `close()`.
 */
export function postgresStorePlugin(options: PostgresStoreOptions): SkeinPlugin {
  return storePlugin({
    id: POSTGRES_STORE_ID,
    factoryType: PostgresChatMessageStoreFactory,
    create: () => new PostgresChatMessageStoreFactory(options),
    // Messages read back are checked against every content kind the container knows.
    adoptRegistry: options.serializationRegistry ? undefined : (factory, registry) => (factory.serializationRegistry = registry),
  });
}
