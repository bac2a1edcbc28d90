/**
 * The SQLite pending store: `import { SqlitePendingStore } from 'toolnexus-ts/sqlite'`.
 * It needs the optional peer dependency `better-sqlite3` (12.x: `npm install better-sqlite3@12`),
 * loaded when a store is built; the root entry exports the same class.
 */
export { SqlitePendingStore, SQLITE_SCHEMA_VERSION } from '../suspension/stores/sqlite';
export type { SqlitePendingStoreOptions } from '../suspension/stores/sqlite';
