import { createRequire } from 'node:module';
import { type SqliteDriverName, sqliteDriverAvailable } from 'skein/store-sqlite';

const require = createRequire(import.meta.url);

/** An SQLite file opened without skein, to read or lock it behind the store's back. */
export interface RawSqlite {
  all<R>(sql: string, ...params: (string | number)[]): R[];
  run(sql: string, ...params: (string | number)[]): void;
  exec(sql: string): void;
  close(): void;
}

interface RawDatabase {
  prepare(sql: string): { all(...params: unknown[]): unknown[]; run(...params: unknown[]): unknown };
  exec(sql: string): unknown;
  close(): unknown;
}

/**
 * The drivers this process can run: on Node 20 better-sqlite3 only; on Node >= 22.13 node:sqlite,
 * plus better-sqlite3 when its native module was built for this Node's ABI.
 */
export const SQLITE_DRIVERS: readonly SqliteDriverName[] = (['node:sqlite', 'better-sqlite3'] as const).filter((d) => sqliteDriverAvailable(d));

/** Opens `path` with `driver` (default: the first one this process has), straight through the driver. */
export function openRawSqlite(path: string, options: { readonly?: boolean; driver?: SqliteDriverName } = {}): RawSqlite {
  const driver = options.driver ?? SQLITE_DRIVERS[0];
  let db: RawDatabase;
  if (driver === 'node:sqlite') {
    const { DatabaseSync } = require('node:sqlite') as { DatabaseSync: new (path: string, options?: { readOnly?: boolean }) => RawDatabase };
    db = new DatabaseSync(path, { readOnly: options.readonly ?? false });
  } else {
    const Database = require('better-sqlite3') as new (path: string, options?: { readonly?: boolean; fileMustExist?: boolean }) => RawDatabase;
    db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: true });
  }
  return {
    all: <R>(sql: string, ...params: (string | number)[]) => db.prepare(sql).all(...params) as R[],
    run: (sql, ...params) => void db.prepare(sql).run(...params),
    exec: (sql) => void db.exec(sql),
    close: () => void db.close(),
  };
}
