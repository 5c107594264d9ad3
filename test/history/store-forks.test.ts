import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { Redis } from 'ioredis';
import type { Container } from 'inversify';
import { agentToken, createContainer, messageText, type AIAgent, type SkeinPlugin } from 'skein';
import { openaiPlugin } from 'skein/openai';
import { PostgresChatMessageStoreFactory, postgresStorePlugin } from 'skein/store-postgres';
import { RedisChatMessageStoreFactory, redisStorePlugin } from 'skein/store-redis';
import { SqliteChatMessageStoreFactory, sqliteStorePlugin } from 'skein/store-sqlite';
import { useEmulator } from '../support/emulator.js';
import { DATABASE_URL, REDIS_URL, RUN_ID, postgresAvailable, redisAvailable, tempDir, withService } from '../stores/services.js';

const redisUp = await redisAvailable();
const postgresUp = await postgresAvailable();
const schema = `skein_hist_${RUN_ID}`;
const redisPrefix = `skein-test:${RUN_ID}:hist:`;

interface StoreCase {
  id: 'sqlite' | 'redis' | 'postgres';
  plugin(): SkeinPlugin;
  close(container: Container): Promise<void> | void;
}

/** Forks through the agent on each durable store: copied by the store, resumed in a new container, deleted alone. */
function forkSuite(store: StoreCase): void {
  const containers: Container[] = [];
  const running = useEmulator({}, {
    beforeStop: async () => {
      for (const c of containers.splice(0)) await store.close(c);
    },
  });

  function agent(): AIAgent {
    const container = createContainer({
      plugins: [openaiPlugin({ apiKey: 'k', baseURL: running.emulator.openaiBaseURL, maxRetries: 0 }), store.plugin()],
      agents: { bot: { client: 'openai-chat', model: 'emulated', messageStore: store.id } },
    });
    containers.push(container);
    return container.get<AIAgent>(agentToken('bot'));
  }

  it('forks at a message into a new key, resumes the fork in a new container, forks the fork, and deletes it without touching its origin', async () => {
    const first = agent();
    const thread = first.getNewThread();
    await first.run('My name is Ada.', { thread });
    await first.run('My name is Bo.', { thread });
    const original = (await first.getMessages(thread)).map(messageText);
    expect(original).to.have.length(4);

    const fork = await first.forkThread(thread, { at: 1 });
    const serialized = JSON.parse(JSON.stringify(await fork.serialize())) as { $type: string; store: { key: string } };
    expect(serialized.$type).to.equal(store.id);
    expect(serialized.store.key).to.not.equal(((await thread.serialize()).store as { key: string }).key);

    // Another process: a new container on the same database.
    const second = agent();
    const resumed = await second.deserializeThread(serialized);
    expect((await second.run("What's my name?", { thread: resumed })).text).to.equal('Your name is Ada.');
    expect((await second.getMessages(resumed)).map(messageText)).to.deep.equal([original[0], original[1], "What's my name?", 'Your name is Ada.']);

    const forkOfFork = await second.forkThread(resumed, { at: 1 });
    expect((await second.run('My name is Cy.', { thread: forkOfFork })).text).to.equal('Nice to meet you, Cy!');

    await second.deleteThread(resumed);
    expect(await second.getMessages(await second.deserializeThread(serialized))).to.deep.equal([]);
    expect((await first.getMessages(await first.deserializeThread(JSON.parse(JSON.stringify(await thread.serialize()))))).map(messageText)).to.deep.equal(original);
    expect(await second.getMessages(forkOfFork)).to.have.length(4);
    expect((await first.getMessages(thread)).map(messageText)).to.deep.equal(original);
  });
}

describe('history: forks on the durable stores (agent.forkThread, Chat Completions on the emulator)', function () {
  this.timeout(30_000);

  describe('SQLite', () => {
    const dir = tempDir();
    after(() => dir.remove());
    forkSuite({
      id: 'sqlite',
      plugin: () => sqliteStorePlugin({ path: join(dir.path, 'threads.db') }),
      close: (c) => c.get(SqliteChatMessageStoreFactory).close(),
    });
  });

  withService('Redis', redisUp, 'start Redis on 127.0.0.1:6379 or set REDIS_URL', () => {
    after(async () => {
      const admin = new Redis(REDIS_URL);
      const keys = await admin.keys(`${redisPrefix}*`);
      if (keys.length) await admin.del(...keys);
      await admin.quit();
    });
    forkSuite({
      id: 'redis',
      plugin: () => redisStorePlugin({ url: REDIS_URL, keyPrefix: redisPrefix, durabilityCheck: false }),
      close: (c) => c.get(RedisChatMessageStoreFactory).close(),
    });
  });

  withService('PostgreSQL', postgresUp, 'start PostgreSQL on 127.0.0.1:5432 or set DATABASE_URL', () => {
    before(async () => {
      const factory = new PostgresChatMessageStoreFactory({ connectionString: DATABASE_URL, schema, durabilityCheck: false });
      await factory.migrate();
      await factory.close();
    });
    after(async () => {
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });
    forkSuite({
      id: 'postgres',
      plugin: () => postgresStorePlugin({ connectionString: DATABASE_URL, schema, durabilityCheck: false }),
      close: (c) => c.get(PostgresChatMessageStoreFactory).close(),
    });
  });
});
