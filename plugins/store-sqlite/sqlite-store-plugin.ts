import { type SkeinPlugin, versionedStorePlugin } from 'skein';
import type { ZodType } from 'zod';
import { SQLITE_STORE_ID, SqliteChatMessageStoreFactory, type SqliteStoreOptions } from './sqlite-chat-message-store.js';
import { SQLITE_DRIVER_OPTIONS, resolveSqliteDriver } from './sqlite-driver.js';

/**
 * The SQLite store plugin: binds `SqliteChatMessageStoreFactory` as the ChatMessageStoreFactory
 * named `sqlite` and contributes its thread serializer. Agents use it with `messageStore: 'sqlite'`.
 * The driver is chosen here, so a missing one fails when the plugin is made, not at the first turn.
 *
 * @example
 * ```ts
 * const container = createContainer({
 *   plugins: [openaiPlugin(), sqliteStorePlugin({ path: './data/threads.db', durability: 'full' })],
 *   agents: { support: { client: 'openai-chat', model: 'gpt-4o-mini', messageStore: 'sqlite' } },
 * });
 * container.get(SqliteChatMessageStoreFactory).driver; // 'node:sqlite' or 'better-sqlite3'
 * ```
 */
export function sqliteStorePlugin(options: SqliteStoreOptions): SkeinPlugin {
  resolveSqliteDriver(options?.driver ?? 'auto');
  return versionedStorePlugin({ id: SQLITE_STORE_ID, factoryType: SqliteChatMessageStoreFactory, create: () => new SqliteChatMessageStoreFactory(options), options });
}

/** Settings a config file may give the plugin (checked, with their paths, before anything is built). */
sqliteStorePlugin.configSchema = async (): Promise<ZodType> => {
  const { z } = await import('zod');
  return z
    .object({
      path: z.string().min(1),
      maxMessages: z.number().int().positive().optional(),
      ttlSeconds: z.number().positive().optional(),
      busyTimeoutMs: z.number().int().nonnegative().optional(),
      durability: z.enum(['full', 'normal']).optional(),
      driver: z.enum(SQLITE_DRIVER_OPTIONS as [string, ...string[]]).optional(),
    })
    .strict();
};
