/**
 * The PostgreSQL store: `import { PostgresStore } from 'toolnexus-ts/postgres'`.
 * It needs the optional peer dependency `pg` (`npm install pg`), loaded when a store builds
 * its own pool; its types name no type of `pg`, so `@types/pg` is not needed.
 */
export { PostgresStore } from './store';
export { POSTGRES_STORE_SCHEMA_VERSION } from './version';
export type {
  PostgresStoreOptions,
  PostgresStoreConnectionOptions,
  PostgresStoreSharedPoolOptions,
  PostgresStoreCommonOptions,
  PostgresPoolConfig,
  PostgresPoolLike,
} from './options';
