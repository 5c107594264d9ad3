import 'reflect-metadata';

export * from './sqlite-chat-message-store.js';
export * from './sqlite-store-plugin.js';
export { SQLITE_DRIVER_OPTIONS, type SqliteDriverName, type SqliteDriverOption, resolveSqliteDriver, sqliteDriverAvailable } from './sqlite-driver.js';
