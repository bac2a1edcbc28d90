export { SqlitePendingStore } from './store';
export type { SqlitePendingStoreOptions } from './store';
export { SQLITE_SCHEMA_VERSION } from './version';
