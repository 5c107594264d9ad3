/**
 * Issue 23: what an acknowledged turn survives, checked. Redis and PostgreSQL read the server's
 * persistence settings after their first successful call and warn once (through the StoreLogger)
 * when acknowledged turns could be lost; SQLite puts its `durability` option into effect (see
 * sqlite-drivers.test.ts for the pragma on every driver). Config files take the new options.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import pg from 'pg';
import { ConfigurationError, StoreError, type StoreLogger, StoreLogger as StoreLoggerToken, createContainer, processWarningStoreLogger } from 'skein';
import { PostgresChatMessageStoreFactory, postgresDurabilityWarning } from 'skein/store-postgres';
import { RedisChatMessageStoreFactory, redisPersistenceWarning, redisStorePlugin } from 'skein/store-redis';
import { SqliteChatMessageStoreFactory } from 'skein/store-sqlite';
import { redisServerInstalled, startPrivateRedis } from './private-redis.js';
import { DATABASE_URL, REDIS_URL, RUN_ID, closedAfterEach, dropSchema, postgresAvailable, redisAvailable, tempDir, withService } from './services.js';

const redisUp = await redisAvailable();
const postgresUp = await postgresAvailable();
const PASSWORD = 'dur-pw-7f3a';

/** A StoreLogger that keeps what it is told. */
function capture(): StoreLogger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, warn: (message) => void warnings.push(message) };
}

describe('Store durability: settings read, one warning, options', function () {
  this.timeout(30_000);

  withService('Redis', redisUp, 'start Redis on 127.0.0.1:6379 or set REDIS_URL', () => {
    const keyPrefix = `skein-test:${RUN_ID}:dur:`;
    const make = closedAfterEach(
      (options: ConstructorParameters<typeof RedisChatMessageStoreFactory>[0] = {}) => new RedisChatMessageStoreFactory({ url: REDIS_URL, keyPrefix, ...options }),
    );

    it('the test server (no AOF, no RDB): one warning after the first call saying every turn is lost on a restart, and how to fix it', async () => {
      const admin = new Redis(REDIS_URL);
      const [, appendonly] = (await admin.config('GET', 'appendonly')) as string[];
      const [, save] = (await admin.config('GET', 'save')) as string[];
      await admin.quit();
      expect({ appendonly, save }, 'the shared test Redis runs with persistence off').to.deep.equal({ appendonly: 'no', save: '' });

      const logger = capture();
      const f = make({ logger });
      const store = f.create();
      expect(logger.warnings).to.deep.equal([]);
      await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'hi' }] }]);
      expect(logger.warnings).to.have.length(1);
      const [warning] = logger.warnings;
      expect(warning).to.include(`Redis store at ${REDIS_URL}`);
      expect(warning).to.include('appendonly no, and no RDB snapshots');
      expect(warning).to.include('every stored turn is lost when the Redis server restarts or crashes');
      expect(warning).to.include('`appendonly yes` and `appendfsync always`');
      expect(warning).to.include('`durabilityCheck: false`');
      // Once per factory, however many calls follow.
      await store.listMessages();
      await f.create().addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'again' }] }]);
      expect(logger.warnings).to.have.length(1);
      expect((await f.checkDurability()).settings).to.include({ appendonly: 'no', save: '' });
    });

    it('durabilityCheck: false: no check, no warning', async () => {
      const logger = capture();
      const store = make({ logger, durabilityCheck: false }).create();
      await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'hi' }] }]);
      await store.listMessages();
      expect(logger.warnings).to.deep.equal([]);
    });

    it('a server that is down: the call fails with its own StoreError, and nothing is logged', async () => {
      const logger = capture();
      const f = make({ logger, url: 'redis://127.0.0.1:1', connectTimeoutMs: 500 });
      const error = await f.create().listMessages().catch((e: unknown) => e);
      expect(error).to.be.instanceOf(StoreError);
      expect((error as Error).message).to.match(/ECONNREFUSED|connect/i);
      expect(logger.warnings).to.deep.equal([]);
    });

    it('a StoreLogger bound in the container receives the warning (a plugin without its own logger)', async () => {
      const container = createContainer({ plugins: [redisStorePlugin({ url: REDIS_URL, keyPrefix })] });
      const logger = capture();
      container.bind<StoreLogger>(StoreLoggerToken).toConstantValue(logger);
      const f = container.get(RedisChatMessageStoreFactory);
      try {
        await f.create().listMessages();
      } finally {
        await f.close();
      }
      expect(logger.warnings).to.have.length(1);
      expect(logger.warnings[0]).to.include('every stored turn is lost');
    });

    it('the persistence settings each give their own warning, or none with AOF synced at every write', () => {
      const server = 'redis://127.0.0.1:6379';
      expect(redisPersistenceWarning(server, { appendonly: 'yes', appendfsync: 'always', save: '' })).to.equal(undefined);
      expect(redisPersistenceWarning(server, { appendonly: 'yes', appendfsync: 'everysec', save: '3600 1' })).to.include(
        'once a second (appendfsync everysec), so the turns acknowledged in the last second or so are lost if the machine crashes or loses power',
      );
      expect(redisPersistenceWarning(server, { appendonly: 'yes', appendfsync: 'no', save: '' })).to.include('(appendfsync no)');
      expect(redisPersistenceWarning(server, { appendonly: 'no', appendfsync: 'always', save: '3600 1 300 100' })).to.include(
        'persists only RDB snapshots (appendonly no, save "3600 1 300 100"), so the turns acknowledged since the last snapshot are lost',
      );
    });

    describe('private redis-servers', () => {
      before(function () {
        if (redisServerInstalled()) return;
        if (process.env.SKEIN_REQUIRE_SERVICES === '1') throw new Error('redis-server is not installed (SKEIN_REQUIRE_SERVICES=1)');
        this.skip();
      });

      it('appendonly yes + appendfsync always: no warning; with appendfsync everysec set on the server: the warning', async () => {
        const server = await startPrivateRedis(PASSWORD, 'aof-always');
        try {
          const logger = capture();
          const f = make({ url: server.url(PASSWORD), logger });
          await f.create().addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'kept' }] }]);
          expect((await f.checkDurability()).settings).to.include({ appendonly: 'yes', appendfsync: 'always' });
          expect(logger.warnings).to.deep.equal([]);

          const admin = new Redis(server.url(PASSWORD));
          await admin.config('SET', 'appendfsync', 'everysec');
          await admin.quit();
          const later = capture();
          await make({ url: server.url(PASSWORD), logger: later }).create().listMessages();
          expect(later.warnings).to.have.length(1);
          expect(later.warnings[0]).to.include('(appendfsync everysec)').and.include('machine crashes or loses power');
          expect(later.warnings[0]).to.include(`127.0.0.1:${server.port}`).and.not.include(PASSWORD);
        } finally {
          await server.stop();
        }
      });

      it('CONFIG forbidden (an ACL user without +config): the store works and warns once that it could not check', async () => {
        const server = await startPrivateRedis(PASSWORD);
        try {
          const admin = new Redis(server.url(PASSWORD));
          await admin.call('ACL', 'SETUSER', 'app', 'on', '>app-pw-9', '~*', '&*', '+@all', '-config');
          await admin.quit();
          const logger = capture();
          const f = make({ url: server.url('app-pw-9', 'app'), logger });
          const store = f.create();
          await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'hi' }] }]);
          expect(await store.listMessages()).to.have.length(1);
          expect(logger.warnings).to.have.length(1);
          expect(logger.warnings[0]).to.include('could not read the server\'s persistence settings (CONFIG GET was refused: NOPERM');
          expect(logger.warnings[0]).to.include('`durabilityCheck: false`').and.not.include('app-pw-9');
          expect(await f.checkDurability()).to.have.property('settings').that.deep.equals({});
        } finally {
          await server.stop();
        }
      });

      it('the default logger: one Node process warning (SkeinStoreWarning, code SKEIN_STORE_WARNING) per distinct message', async () => {
        const server = await startPrivateRedis(PASSWORD);
        const seen: Error[] = [];
        const listener = (warning: Error) => {
          if (warning.name === 'SkeinStoreWarning' && warning.message.includes(`127.0.0.1:${server.port}`)) seen.push(warning);
        };
        process.on('warning', listener);
        try {
          expect(make({ url: server.url(PASSWORD) }).logger).to.equal(processWarningStoreLogger);
          await make({ url: server.url(PASSWORD) }).create().listMessages();
          await make({ url: server.url(PASSWORD) }).create().listMessages();
          // process.emitWarning delivers on the next tick.
          await new Promise((resolve) => setImmediate(resolve));
          expect(seen).to.have.length(1);
          expect((seen[0] as Error & { code?: string }).code).to.equal('SKEIN_STORE_WARNING');
          expect(seen[0]!.message).to.include('every stored turn is lost');
        } finally {
          process.off('warning', listener);
          await server.stop();
        }
      });
    });
  });

  withService('PostgreSQL', postgresUp, 'start PostgreSQL on 127.0.0.1:5432 (database "test") or set DATABASE_URL', () => {
    const schema = `skein_${RUN_ID}_dur`;
    const syncOff = `${DATABASE_URL}${DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent('-c synchronous_commit=off')}`;
    const make = closedAfterEach(
      (options: ConstructorParameters<typeof PostgresChatMessageStoreFactory>[0] = {}) =>
        new PostgresChatMessageStoreFactory({ connectionString: DATABASE_URL, schema, ...options }),
    );
    const makePool = closedAfterEach((config: pg.PoolConfig) => {
      const pool = new pg.Pool(config);
      return Object.assign(pool, { close: () => pool.end() });
    });
    after(() => dropSchema(schema));

    it('the server defaults (synchronous_commit, fsync, full_page_writes on): the settings as SHOW gives them, no warning', async () => {
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      const show = async (name: string) => ((await admin.query(`SHOW ${name}`)).rows[0] as Record<string, string>)[name];
      const expected = { synchronous_commit: await show('synchronous_commit'), fsync: await show('fsync'), full_page_writes: await show('full_page_writes') };
      await admin.end();
      expect(expected).to.deep.equal({ synchronous_commit: 'on', fsync: 'on', full_page_writes: 'on' });

      const logger = capture();
      const f = make({ logger });
      await f.migrate();
      await f.create().addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'hi' }] }]);
      expect(await f.checkDurability()).to.deep.equal({ settings: expected, warning: undefined });
      expect(logger.warnings).to.deep.equal([]);
    });

    it('a session with synchronous_commit=off (connection options): one warning on what is lost and how to fix it', async () => {
      const logger = capture();
      const f = make({ connectionString: syncOff, logger });
      await f.migrate();
      const store = f.create();
      await store.addMessages([{ role: 'user', contents: [{ kind: 'text', text: 'hi' }] }]);
      await store.listMessages();
      expect((await f.checkDurability()).settings).to.include({ synchronous_commit: 'off', fsync: 'on' });
      expect(logger.warnings).to.have.length(1);
      const [warning] = logger.warnings;
      expect(warning).to.include('PostgreSQL store at postgres://');
      expect(warning).to.include('synchronous_commit is off, so a commit is acknowledged before it reaches disk');
      expect(warning).to.include('lost if the PostgreSQL server or the machine crashes');
      expect(warning).to.include('set synchronous_commit = on');
      expect(warning).to.include('`durabilityCheck: false`');
    });

    it('a pool of your own whose sessions run synchronous_commit=off is checked too; durabilityCheck: false silences it', async () => {
      const pool = makePool({ connectionString: DATABASE_URL, options: '-c synchronous_commit=off' });
      const logger = capture();
      await make({ pool, logger }).migrate();
      expect(logger.warnings).to.have.length(1);
      const quiet = capture();
      const f = make({ pool, logger: quiet, durabilityCheck: false });
      await f.migrate();
      await f.create().listMessages();
      expect(quiet.warnings).to.deep.equal([]);
    });

    it('fsync or full_page_writes off (server-wide settings): named in the one warning with their fixes', () => {
      const warning = postgresDurabilityWarning('postgres://db', { synchronous_commit: 'on', fsync: 'off', full_page_writes: 'off' })!;
      expect(warning).to.include('fsync is off').and.include('set fsync = on in postgresql.conf');
      expect(warning).to.include('full_page_writes is off').and.include('set full_page_writes = on');
      expect(postgresDurabilityWarning('postgres://db', { synchronous_commit: 'remote_write', fsync: 'on', full_page_writes: 'on' })).to.equal(undefined);
      expect(postgresDurabilityWarning('postgres://db', { synchronous_commit: 'local', fsync: 'on', full_page_writes: 'on' })).to.equal(undefined);
    });
  });

  describe('config files', () => {
    let dir: ReturnType<typeof tempDir>;
    beforeEach(() => (dir = tempDir()));
    afterEach(() => dir.remove());

    it('a YAML config takes durability and driver (sqlite) and durabilityCheck (redis, postgres)', async () => {
      const file = join(dir.path, 'skein.yaml');
      writeFileSync(
        file,
        [
          'plugins:',
          '  sqlite:',
          `    path: ${join(dir.path, 'threads.db')}`,
          '    durability: normal',
          '    driver: auto',
          '  redis:',
          `    url: ${REDIS_URL}`,
          '    durabilityCheck: false',
          '  postgres:',
          `    connectionString: ${DATABASE_URL}`,
          '    durabilityCheck: false',
          '',
        ].join('\n'),
      );
      const container = await createContainer(file);
      const sqlite = container.get(SqliteChatMessageStoreFactory);
      try {
        expect(sqlite.durability).to.equal('normal');
        expect(sqlite.pragma('synchronous')).to.equal(1);
        expect(container.get(RedisChatMessageStoreFactory).options.durabilityCheck).to.equal(false);
        expect(container.get(PostgresChatMessageStoreFactory).options.durabilityCheck).to.equal(false);
      } finally {
        sqlite.close();
      }
    });

    it('a bad value or a misspelt option is a ConfigurationError naming its path', async () => {
      const file = join(dir.path, 'bad.yaml');
      writeFileSync(
        file,
        ['plugins:', '  sqlite:', `    path: ${join(dir.path, 'threads.db')}`, '    durability: fast', '  redis:', '    durabilityChek: false', ''].join('\n'),
      );
      const error = await createContainer(file).catch((e: unknown) => e);
      expect(error).to.be.instanceOf(ConfigurationError);
      expect((error as Error).message).to.include('plugins.sqlite.durability');
      expect((error as Error).message).to.include('durabilityChek');
    });
  });
});
