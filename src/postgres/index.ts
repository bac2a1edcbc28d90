/**
 * The PostgreSQL pending store: `import { PostgresPendingStore } from 'toolnexus-ts/postgres'`.
 * It needs the optional peer dependency `pg` (`npm install pg`), loaded when a store builds
 * its own pool; its types name no type of `pg`, so `@types/pg` is not needed. The root entry
 * exports the same class.
 */
export { PostgresPendingStore, POSTGRES_STORE_SCHEMA_VERSION } from '../suspension/stores/postgres';
export type {
  PostgresPendingStoreOptions,
  PostgresStoreConnectionOptions,
  PostgresStoreSharedPoolOptions,
  PostgresStoreCommonOptions,
  PostgresPoolConfig,
  PostgresPoolLike,
} from '../suspension/stores/postgres';
