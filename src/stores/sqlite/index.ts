/**
 * The SQLite store: `import { SqliteStore } from 'toolnexus-ts/sqlite'`.
 * It needs the optional peer dependency `better-sqlite3` (12.x: `npm install better-sqlite3@12`),
 * loaded when a store is built.
 */
export { SqliteStore } from './store';
export type { SqliteStoreOptions } from './options';
export { SQLITE_SCHEMA_VERSION } from './version';
