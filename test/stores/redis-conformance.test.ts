import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ChatMessageStoreFactory, SerializationError, SerializationRegistry, SerializationRegistryImpl, StoreError, createContainer } from 'skein';
import { runChatMessageStoreConformance } from 'skein/testing';
import { RedisChatMessageStoreFactory, redisStorePlugin } from 'skein/store-redis';
import { REDIS_URL, RUN_ID, closedAfterEach, redisAvailable, withService } from './services.js';

const up = await redisAvailable();
const prefix = `skein-test:${RUN_ID}:`;

async function keysUnder(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

withService('Redis store', up, 'start Redis on 127.0.0.1:6379 or set REDIS_URL', () => {
  let admin: Redis;
  before(() => {
    admin = new Redis(REDIS_URL);
  });
  after(async () => {
    const keys = await keysUnder(admin, `${prefix}*`);
    if (keys.length) await admin.del(...keys);
    await admin.quit();
  });

  runChatMessageStoreConformance('redis', (options) => new RedisChatMessageStoreFactory({ url: REDIS_URL, keyPrefix: prefix, ...options }), {
    capabilities: { maxMessages: true, ttl: true },
    // Redis expires keys itself: wait (polling, not timing) until this run's TTL'd keys are gone.
    expire: async (factory) => {
      for (let i = 0; i < 200; i++) {
        const keys = await keysUnder(admin, `${prefix}*`);
        const withTtl = (await Promise.all(keys.map(async (k) => ((await admin.pttl(k)) >= 0 ? k : undefined)))).filter(Boolean);
        if (withTtl.length === 0) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`keys of ${factory.type} never expired`);
    },
  });

  describe('Redis store specifics', () => {
    const make = closedAfterEach(
      (options: ConstructorParameters<typeof RedisChatMessageStoreFactory>[0] = {}) => new RedisChatMessageStoreFactory({ url: REDIS_URL, keyPrefix: prefix, ...options }),
    );


    it('binds its factory as the "redis" store and its thread type in a container', async () => {
      const container = createContainer({ plugins: [redisStorePlugin({ url: REDIS_URL, keyPrefix: prefix })] });
      const factory = container.get<ChatMessageStoreFactory>(ChatMessageStoreFactory, { name: 'redis' });
      expect(factory).to.be.instanceOf(RedisChatMessageStoreFactory);
      const registry = container.get<SerializationRegistry>(SerializationRegistry);
      expect(registry.threadTypes()).to.include('redis');
      expect((factory as RedisChatMessageStoreFactory).serializationRegistry).to.equal(registry);
      await (factory as RedisChatMessageStoreFactory).close();
    });
    it('sets a native TTL on both keys of a thread when ttlSeconds is given', async () => {
      const store = make({ ttlSeconds: 300 }).create();
      await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'hi' }] }]);
      const keys = await keysUnder(admin, `${prefix}{${store.key}}*`);
      expect(keys).to.have.length(2);
      for (const k of keys) expect(await admin.ttl(k)).to.be.within(1, 300);
    });

    it('rejects a tampered message with a SerializationError and returns nothing', async () => {
      const f = make();
      const store = f.create();
      await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'hi' }] }]);
      await admin.rpush(f.listKey(store.key), JSON.stringify({ role: 'hacker', contents: [] }));
      const error = await store.listMessages().catch((e: unknown) => e);
      expect(error).to.be.instanceOf(SerializationError);
      expect((error as SerializationError).path).to.include(store.key);
    });

    it('rejects a key that could address other data', async () => {
      const f = make();
      const error = await Promise.resolve(f.restore({ key: 'x} *' }, { path: '$.store', version: 1, registry: SerializationRegistryImpl.withDefaults() })).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(SerializationError);
      expect((error as SerializationError).path).to.equal('$.store.key');
    });

    it('fails with a StoreError that hides the password when the server is down, and works once it is up', async () => {
      const f = make({ url: 'redis://app:s3cr3t-pw@127.0.0.1:1', connectTimeoutMs: 1000 });
      const store = f.create();
      const error = await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'hi' }] }]).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(StoreError);
      expect((error as StoreError).store).to.equal('redis');
      expect(String(error)).to.include('127.0.0.1:1').and.not.include('s3cr3t-pw');
      expect(String((error as Error).cause)).to.not.include('s3cr3t-pw');
      expect(JSON.stringify(await store.serialize())).to.not.include('s3cr3t-pw');
    });
  });
});
