import { createRequire } from 'node:module';
import { ConfigurationError } from 'skein';

/** The SQLite drivers the store runs on. Both read and write the same file format. */
export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3';

/** Which driver to use: `auto` (the default) takes Node's built-in `node:sqlite` when present, else `better-sqlite3`. */
export type SqliteDriverOption = 'auto' | SqliteDriverName;

export const SQLITE_DRIVER_OPTIONS: readonly SqliteDriverOption[] = ['auto', 'node:sqlite', 'better-sqlite3'];

/** A prepared statement: the part both drivers' statements share (positional parameters). */
export interface SqliteStatement<P extends unknown[] = unknown[], R = unknown> {
  get(...params: P): R | undefined;
  all(...params: P): R[];
  run(...params: P): { changes: number | bigint };
}

/** One open database, whichever driver opened it. */
export interface SqliteConnection {
  readonly driver: SqliteDriverName;
  exec(sql: string): void;
  prepare<P extends unknown[] = unknown[], R = unknown>(sql: string): SqliteStatement<P, R>;
  close(): void;
}

/** The slice of `node:sqlite` used here (declared locally: this package's @types/node predates it). */
interface NodeSqliteModule {
  DatabaseSync: new (path: string) => {
    exec(sql: string): void;
    prepare(sql: string): SqliteStatement;
    close(): void;
  };
}

/** The slice of `better-sqlite3` used here: its types are a dev dependency, not part of the public API. */
type BetterSqlite3Constructor = new (path: string) => {
  exec(sql: string): unknown;
  prepare(sql: string): SqliteStatement;
  close(): unknown;
};

const require = createRequire(import.meta.url);

type Loaded<T> = { ok: true; value: T } | { ok: false; error: unknown };
let nodeSqlite: Loaded<NodeSqliteModule> | undefined;
let betterSqlite3: Loaded<BetterSqlite3Constructor> | undefined;

function load<T>(id: string): Loaded<T> {
  try {
    return { ok: true, value: require(id) as T };
  } catch (error) {
    return { ok: false, error };
  }
}

// Each driver is loaded on first use only: better-sqlite3 is an optional peer (a native build),
// and node:sqlite prints an ExperimentalWarning on Node 22 when loaded.
const loadNodeSqlite = () => (nodeSqlite ??= load<NodeSqliteModule>('node:sqlite'));
const loadBetterSqlite3 = () => (betterSqlite3 ??= probe(load<BetterSqlite3Constructor>('better-sqlite3')));

/** better-sqlite3 loads its native addon at the first `new Database()`: open one to know it works on this Node's ABI. */
function probe(loaded: Loaded<BetterSqlite3Constructor>): Loaded<BetterSqlite3Constructor> {
  if (!loaded.ok) return loaded;
  try {
    new loaded.value(':memory:').close();
    return loaded;
  } catch (error) {
    return { ok: false, error };
  }
}

/** Whether this process can use `driver` (loads it to find out). */
export function sqliteDriverAvailable(driver: SqliteDriverName): boolean {
  return (driver === 'node:sqlite' ? loadNodeSqlite() : loadBetterSqlite3()).ok;
}

/**
 * The driver `option` means in this process: `auto` takes `node:sqlite` (Node >= 22.13, no native
 * build) and falls back to `better-sqlite3`. A driver that cannot load is a ConfigurationError
 * saying how to get one.
 */
export function resolveSqliteDriver(option: SqliteDriverOption = 'auto'): SqliteDriverName {
  if (!SQLITE_DRIVER_OPTIONS.includes(option)) {
    throw new ConfigurationError(`sqlite store: driver must be one of ${SQLITE_DRIVER_OPTIONS.map((d) => `"${d}"`).join(', ')}, found ${JSON.stringify(option)}.`);
  }
  if (option !== 'better-sqlite3' && loadNodeSqlite().ok) return 'node:sqlite';
  if (option === 'node:sqlite') {
    throw new ConfigurationError(
      `sqlite store: driver "node:sqlite" is not available in Node ${process.versions.node} (it needs Node >= 22.13). ` +
        'Run a newer Node, or use driver "better-sqlite3" (npm install better-sqlite3).',
    );
  }
  const better = loadBetterSqlite3();
  if (better.ok) return 'better-sqlite3';
  const reason = (better.error instanceof Error ? better.error.message : String(better.error)).replace(/\s+/g, ' ').trim().replace(/\.$/, '');
  throw new ConfigurationError(
    `sqlite store: driver "${option}" needs the better-sqlite3 package${option === 'auto' ? ` (Node ${process.versions.node} has no node:sqlite; it needs Node >= 22.13)` : ''}, ` +
      `which could not be loaded: ${reason}. Run \`npm install better-sqlite3\` (or \`npm rebuild better-sqlite3\` after changing Node versions)${option === 'auto' ? ', or run Node >= 22.13' : ''}.`,
  );
}

/** Opens `path` with `driver` (resolved by resolveSqliteDriver first). */
export function openSqlite(driver: SqliteDriverName, path: string): SqliteConnection {
  if (driver === 'node:sqlite') {
    const loaded = loadNodeSqlite();
    if (!loaded.ok) throw loaded.error;
    const db = new loaded.value.DatabaseSync(path);
    return wrap(driver, db);
  }
  const loaded = loadBetterSqlite3();
  if (!loaded.ok) throw loaded.error;
  return wrap(driver, new loaded.value(path));
}

function wrap(driver: SqliteDriverName, db: { exec(sql: string): unknown; prepare(sql: string): SqliteStatement; close(): unknown }): SqliteConnection {
  return {
    driver,
    exec: (sql) => void db.exec(sql),
    prepare: <P extends unknown[], R>(sql: string) => db.prepare(sql) as unknown as SqliteStatement<P, R>,
    close: () => void db.close(),
  };
}

/** Whether a driver error is SQLITE_BUSY (better-sqlite3: `code`; node:sqlite: `errcode` 5, possibly extended). */
export function isSqliteBusy(error: unknown): boolean {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown };
  return code === 'SQLITE_BUSY' || (typeof code === 'string' && code.startsWith('SQLITE_BUSY_')) || (typeof errcode === 'number' && (errcode & 0xff) === 5);
}
