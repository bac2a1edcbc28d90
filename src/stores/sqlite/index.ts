/**
 * The SQLite store: `import { SqlitePendingStore } from 'toolnexus-ts/sqlite'`.
 * It needs the optional peer dependency `better-sqlite3` (12.x: `npm install better-sqlite3@12`),
 * loaded when a store is built.
 */
export { SqlitePendingStore } from './store';
export type { SqlitePendingStoreOptions } from './store';
export { SQLITE_SCHEMA_VERSION } from './version';
