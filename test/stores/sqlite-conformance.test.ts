import { join } from 'node:path';
import { InMemoryChatMessageStoreFactory } from 'skein';
import { runChatMessageStoreConformance } from 'skein/testing';
import { SqliteChatMessageStoreFactory } from 'skein/store-sqlite';
import { tempDir } from './services.js';

runChatMessageStoreConformance('in-memory', () => new InMemoryChatMessageStoreFactory(), { capabilities: { durable: false } });

const dir = tempDir();
after(() => dir.remove());
const file = join(dir.path, 'threads.db');

runChatMessageStoreConformance('sqlite (file)', (options) => new SqliteChatMessageStoreFactory({ path: file, ...options }), {
  capabilities: { maxMessages: true, ttl: true },
  expire: async (factory) => {
    await factory.prune(new Date(Date.now() + 3600_000));
  },
});

// Each :memory: factory has its own database, so reconnect and cross-instance conflicts do not apply.
runChatMessageStoreConformance('sqlite (:memory:)', () => new SqliteChatMessageStoreFactory({ path: ':memory:' }), {
  capabilities: { durable: false, conflicts: false },
});
