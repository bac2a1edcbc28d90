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
