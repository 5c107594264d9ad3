/**
 * Issue 17 (embedded SQLite with no native build) and issue 23 (durability) for the SQLite store:
 * the driver each option picks, the same file read and written by both drivers, and the
 * `synchronous` pragma each durability option puts in effect, on every driver this Node has.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect } from 'chai';
import { ConfigurationError, SerializationRegistryImpl, messageText } from 'skein';
import { SqliteChatMessageStoreFactory, type SqliteDriverName, sqliteDriverAvailable, sqliteStorePlugin } from 'skein/store-sqlite';
import { SQLITE_DRIVERS, openRawSqlite } from './raw-sqlite.js';
import { FIXTURE_TURN, SQLITE_FIXTURE_DIR, sqliteFixtureFile } from './sqlite-fixture.js';
import { closedAfterEach, tempDir } from './services.js';

const CONTEXT = { path: '$.store', version: 1, registry: SerializationRegistryImpl.withDefaults() };
const ALL_DRIVERS: readonly SqliteDriverName[] = ['node:sqlite', 'better-sqlite3'];
const u = (text: string) => ({ role: 'user' as const, contents: [{ kind: 'text' as const, text }] });

/** Whether this Node has node:sqlite, asked of Node itself rather than of the store. */
function nodeHasSqlite(): boolean {
  try {
    createRequire(import.meta.url)('node:sqlite');
    return true;
  } catch {
    return false;
  }
}

describe('SQLite store: drivers and durability', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => (dir = tempDir()));
  // Registered before the folder's removal, so the factories close first.
  const make = closedAfterEach(
    (options: Partial<ConstructorParameters<typeof SqliteChatMessageStoreFactory>[0]> = {}) =>
      new SqliteChatMessageStoreFactory({ path: join(dir.path, 'threads.db'), ...options }),
  );
  afterEach(() => dir.remove());

  it('this Node runs at least one driver', () => {
    expect(SQLITE_DRIVERS).to.not.be.empty;
  });

  it(`driver "auto" (the default) takes node:sqlite where Node has it, else better-sqlite3 — here ${nodeHasSqlite() ? 'node:sqlite' : 'better-sqlite3'}`, async () => {
    const expected = nodeHasSqlite() ? 'node:sqlite' : 'better-sqlite3';
    expect(make().driver).to.equal(expected);
    expect(make({ driver: 'auto' }).driver).to.equal(expected);
    const store = make().create();
    await store.addMessages([u('hi')]);
    expect((await store.listMessages()).map(messageText)).to.deep.equal(['hi']);
  });

  for (const driver of ALL_DRIVERS) {
    it(`driver "${driver}": runs when this Node can load it, else a ConfigurationError saying how to get it`, async () => {
      if (sqliteDriverAvailable(driver)) {
        const f = make({ driver });
        expect(f.driver).to.equal(driver);
        await f.create().addMessages([u('hi')]);
        return;
      }
      const error = (() => {
        try {
          make({ driver });
        } catch (e) {
          return e;
        }
      })();
      expect(error).to.be.instanceOf(ConfigurationError);
      expect((error as Error).message).to.include(`"${driver}"`);
      if (driver === 'node:sqlite') expect((error as Error).message).to.match(/Node >= 22\.13.*npm install better-sqlite3/);
      else expect((error as Error).message).to.include('npm install better-sqlite3');
      // The plugin fails when it is made (a config file reports it at plugins.sqlite), not at the first turn.
      expect(() => sqliteStorePlugin({ path: join(dir.path, 'p.db'), driver })).to.throw(ConfigurationError);
    });
  }

  it('rejects an unknown driver or durability with a ConfigurationError naming the choices', () => {
    expect(() => make({ driver: 'sqlite3' as never })).to.throw(ConfigurationError, /"auto", "node:sqlite", "better-sqlite3", found "sqlite3"/);
    expect(() => make({ durability: 'fast' as never })).to.throw(ConfigurationError, /"full" or "normal", found "fast"/);
  });

  for (const driver of SQLITE_DRIVERS) {
    describe(`on ${driver}`, () => {
      it('durability "full" is the default: WAL with synchronous=FULL (2) on the connection, after a reopen too', async () => {
        const f = make({ driver });
        expect(f.durability).to.equal('full');
        await f.create().addMessages([u('hi')]);
        expect(f.pragma('journal_mode')).to.equal('wal');
        expect(f.pragma('synchronous')).to.equal(2);
        f.close();
        expect(f.pragma('synchronous')).to.equal(2);
      });

      it('durability "normal": synchronous=NORMAL (1); another factory on the same file keeps its own FULL', async () => {
        const normal = make({ driver, durability: 'normal' });
        await normal.create().addMessages([u('hi')]);
        expect(normal.durability).to.equal('normal');
        expect(normal.pragma('synchronous')).to.equal(1);
        expect(make({ driver }).pragma('synchronous')).to.equal(2);
        expect(make({ driver, durability: 'full' }).pragma('synchronous')).to.equal(2);
      });

      it('a :memory: database takes the option too', () => {
        expect(make({ driver, path: ':memory:', durability: 'normal' }).pragma('synchronous')).to.equal(1);
        expect(make({ driver, path: ':memory:' }).pragma('synchronous')).to.equal(2);
      });

      for (const writer of ALL_DRIVERS) {
        it(`reads and continues a file written by ${writer} (the same file format)`, async () => {
          const path = join(dir.path, 'copy.db');
          copyFileSync(join(SQLITE_FIXTURE_DIR, sqliteFixtureFile(writer)), path);
          const f = make({ driver, path });
          const store = await f.restore({ key: 'fixture' }, CONTEXT);
          expect(await store.listMessages()).to.deep.equal(FIXTURE_TURN);
          await store.addMessages([u('next')]);
          f.close();
          // Read back without skein, through this process's own driver.
          const raw = openRawSqlite(path, { readonly: true });
          try {
            const rows = raw.all<{ seq: number; body: string }>('SELECT seq, body FROM skein_messages WHERE thread_key = ? ORDER BY seq', 'fixture');
            expect(rows.map((r) => r.seq)).to.deep.equal([1, 2, 3, 4]);
            expect(messageText(JSON.parse(rows[3]!.body))).to.equal('next');
            expect(raw.all<{ version: number }>('SELECT version FROM skein_threads WHERE key = ?', 'fixture')).to.deep.equal([{ version: 4 }]);
          } finally {
            raw.close();
          }
        });
      }
    });
  }
});

describe('SQLite store: drivers load lazily', () => {
  /** Runs `body` in a fresh Node (this one), printing which driver modules it loaded. */
  function loadedIn(body: string): { betterSqlite3: boolean } {
    const script = `
      import { createRequire } from 'node:module';
      const store = await import('skein/store-sqlite');
      ${body}
      const loaded = Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('better-sqlite3'));
      process.stdout.write(JSON.stringify({ betterSqlite3: loaded }));`;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`child failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as { betterSqlite3: boolean };
  }

  it('importing skein/store-sqlite loads no driver', () => {
    expect(loadedIn('').betterSqlite3).to.equal(false);
  });

  it(`better-sqlite3 loads only when it is the driver chosen (here "auto" chooses ${nodeHasSqlite() ? 'node:sqlite' : 'better-sqlite3'})`, () => {
    const auto = loadedIn(`new store.SqliteChatMessageStoreFactory({ path: ':memory:' }).create();`);
    expect(auto.betterSqlite3).to.equal(!nodeHasSqlite());
  });
});
