import { expect } from 'chai';
import pg from 'pg';
import { ChatMessageStoreFactory, SerializationError, SerializationRegistry, StoreError, createContainer } from 'skein';
import { runChatMessageStoreConformance } from 'skein/testing';
import { POSTGRES_SCHEMA_VERSION, PostgresChatMessageStoreFactory, postgresStorePlugin } from 'skein/store-postgres';
import { DATABASE_URL, RUN_ID, closedAfterEach, postgresAvailable, withService } from './services.js';

const up = await postgresAvailable();
const schema = `skein_${RUN_ID}`;

withService('PostgreSQL store', up, 'start PostgreSQL on 127.0.0.1:5432 (database "test") or set DATABASE_URL', () => {
  let admin: pg.Client;
  before(async () => {
    admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
  });
  after(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}_fresh" CASCADE`);
    await admin.end();
  });

  runChatMessageStoreConformance(
    'postgres',
    async (options) => {
      const factory = new PostgresChatMessageStoreFactory({ connectionString: DATABASE_URL, schema, ...options });
      await factory.migrate();
      return factory;
    },
    {
      capabilities: { maxMessages: true, ttl: true },
      expire: async (factory) => {
        await factory.prune(new Date(Date.now() + 3600_000));
      },
    },
  );

  describe('PostgreSQL store specifics', () => {
    const make = closedAfterEach(
      (options: ConstructorParameters<typeof PostgresChatMessageStoreFactory>[0] = {}) =>
        new PostgresChatMessageStoreFactory({ connectionString: DATABASE_URL, schema, ...options }),
    );


    it('binds its factory as the "postgres" store and its thread type in a container', async () => {
      const container = createContainer({ plugins: [postgresStorePlugin({ connectionString: DATABASE_URL, schema })] });
      const factory = container.get<ChatMessageStoreFactory>(ChatMessageStoreFactory, { name: 'postgres' });
      expect(factory).to.be.instanceOf(PostgresChatMessageStoreFactory);
      const registry = container.get<SerializationRegistry>(SerializationRegistry);
      expect(registry.threadTypes()).to.include('postgres');
      expect((factory as PostgresChatMessageStoreFactory).serializationRegistry).to.equal(registry);
      await (factory as PostgresChatMessageStoreFactory).close();
    });
    it('migrates a new schema once; running it again (even concurrently) changes nothing', async () => {
      const f = make({ schema: `${schema}_fresh` });
      const before = await admin.query(`SELECT 1 FROM information_schema.schemata WHERE schema_name = $1`, [`${schema}_fresh`]);
      expect(before.rowCount).to.equal(0);
      const results = await Promise.all([f.migrate(), f.migrate(), make({ schema: `${schema}_fresh` }).migrate()]);
      expect(results.map((r) => r.to)).to.deep.equal([POSTGRES_SCHEMA_VERSION, POSTGRES_SCHEMA_VERSION, POSTGRES_SCHEMA_VERSION]);
      expect(results.filter((r) => r.from === 0)).to.have.length(1);
      const versions = await admin.query(`SELECT version FROM "${schema}_fresh".skein_schema_version ORDER BY version`);
      expect(versions.rows.map((r: { version: number }) => r.version)).to.deep.equal([1]);
    });

    it('says to run migrate() when the schema is missing', async () => {
      const f = make({ schema: `${schema}_missing` });
      const error = await f.create().listMessages().catch((e: unknown) => e);
      expect(error).to.be.instanceOf(StoreError);
      expect(String(error)).to.include('migrate()');
    });

    it('appends a turn with one statement whatever the thread length', async () => {
      const f = make();
      await f.migrate();
      const store = f.create();
      await store.addMessages(Array.from({ length: 500 }, (_, i) => ({ role: 'user' as const, contents: [{ kind: 'text' as const, text: `m${i}` }] })));
      const spy = await import('sinon').then((s) => s.default.spy(pg.Pool.prototype, 'query'));
      try {
        await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'one more' }] }]);
        expect(spy.callCount).to.equal(1);
      } finally {
        spy.restore();
      }
    });

    it('rejects a tampered message with a SerializationError naming the row', async () => {
      const f = make();
      await f.migrate();
      const store = f.create();
      await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'hi' }] }]);
      await admin.query(`UPDATE "${schema}".skein_messages SET body = $1 WHERE thread_key = $2`, ['{"role":"user","contents":[{"kind":"evil"}]}', store.key]);
      const error = await store.listMessages().catch((e: unknown) => e);
      expect(error).to.be.instanceOf(SerializationError);
      expect((error as SerializationError).path).to.equal(`postgres:${store.key}#1.contents[0].kind`);
    });

    it('fails with a StoreError that hides the password when the server is down', async () => {
      const f = make({ connectionString: 'postgres://app:s3cr3t-pw@127.0.0.1:1/test', connectTimeoutMs: 1000 });
      const error = await f.migrate().catch((e: unknown) => e);
      expect(error).to.be.instanceOf(StoreError);
      expect(String(error)).to.include('127.0.0.1:1').and.not.include('s3cr3t-pw');
      expect(String((error as Error).cause)).to.not.include('s3cr3t-pw');
    });

    it('fails with a StoreError that hides the password when the user is refused', async () => {
      const url = new URL(DATABASE_URL);
      url.username = `nobody_${RUN_ID}`;
      url.password = 's3cr3t-pw';
      const f = make({ connectionString: url.toString() });
      const error = await f.migrate().catch((e: unknown) => e);
      expect(error).to.be.instanceOf(StoreError);
      expect(String(error)).to.include(`nobody_${RUN_ID}`).and.not.include('s3cr3t-pw');
      expect(JSON.stringify(await f.create().serialize())).to.not.include('s3cr3t-pw');
    });
  });
});
