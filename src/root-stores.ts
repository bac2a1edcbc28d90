/**
 * The durable stores as the root entry still exports them, for one release. Their home is
 * their own entry, which also holds their schema versions and option types.
 */
import { PostgresPendingStore as PostgresStore, type PostgresPendingStoreOptions as PostgresOptions } from './stores/postgres';
import { SqlitePendingStore as SqliteStore, type SqlitePendingStoreOptions as SqliteOptions } from './stores/sqlite';

/** @deprecated Since 0.2: import it from `toolnexus-ts/sqlite`. */
export const SqlitePendingStore = SqliteStore;
/** @deprecated Since 0.2: import it from `toolnexus-ts/sqlite`. */
export type SqlitePendingStore = SqliteStore;
/** @deprecated Since 0.2: import it from `toolnexus-ts/sqlite`. */
export type SqlitePendingStoreOptions = SqliteOptions;
/** @deprecated Since 0.2: import it from `toolnexus-ts/postgres`. */
export const PostgresPendingStore = PostgresStore;
/** @deprecated Since 0.2: import it from `toolnexus-ts/postgres`. */
export type PostgresPendingStore = PostgresStore;
/** @deprecated Since 0.2: import it from `toolnexus-ts/postgres`. */
export type PostgresPendingStoreOptions = PostgresOptions;
