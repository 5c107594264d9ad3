import { join } from 'node:path';
import { InMemoryChatMessageStoreFactory } from 'skein';
import { runChatMessageStoreConformance } from 'skein/testing';
import { SqliteChatMessageStoreFactory } from 'skein/store-sqlite';
import { SQLITE_DRIVERS } from './raw-sqlite.js';
import { tempDir } from './services.js';

runChatMessageStoreConformance('in-memory', () => new InMemoryChatMessageStoreFactory(), { capabilities: { durable: false } });

const dir = tempDir();
after(() => dir.remove());

// The same suite on every driver this Node can run (node:sqlite and/or better-sqlite3).
for (const driver of SQLITE_DRIVERS) {
  const file = join(dir.path, `threads-${driver.replace(':', '-')}.db`);

  runChatMessageStoreConformance(`sqlite (file, ${driver})`, (options) => new SqliteChatMessageStoreFactory({ path: file, driver, ...options }), {
    capabilities: { maxMessages: true, ttl: true },
    expire: async (factory) => {
      await factory.prune(new Date(Date.now() + 3600_000));
    },
  });

  // Each :memory: factory has its own database, so reconnect and cross-instance conflicts do not apply.
  runChatMessageStoreConformance(`sqlite (:memory:, ${driver})`, () => new SqliteChatMessageStoreFactory({ path: ':memory:', driver }), {
    capabilities: { durable: false, conflicts: false },
  });
}
