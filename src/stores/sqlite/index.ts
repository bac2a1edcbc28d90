/**
 * The SQLite store: `import { SqliteStore } from 'toolnexus-ts/sqlite'`.
 * It runs on node:sqlite, built into Node.js 22.13 and later, and otherwise on the optional
 * peer dependency `better-sqlite3` (12 or 13), loaded when a store is built.
 */
export { SqliteStore } from './store';
export type { SqliteStoreOptions } from './options';
export type { BetterSqlite3Class, BetterSqlite3Database, SqliteDriver } from './driver';
export { SQLITE_SCHEMA_VERSION } from './version';
