/**
 * The PostgreSQL store: `import { PostgresPendingStore } from 'toolnexus-ts/postgres'`.
 * It needs the optional peer dependency `pg` (`npm install pg`), loaded when a store builds
 * its own pool; its types name no type of `pg`, so `@types/pg` is not needed.
 */
export { PostgresPendingStore } from './store';
export { POSTGRES_STORE_SCHEMA_VERSION } from './version';
export type {
  PostgresPendingStoreOptions,
  PostgresStoreConnectionOptions,
  PostgresStoreSharedPoolOptions,
  PostgresStoreCommonOptions,
  PostgresPoolConfig,
  PostgresPoolLike,
} from './options';
