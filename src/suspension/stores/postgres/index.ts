export { PostgresPendingStore } from './store';
export { POSTGRES_STORE_SCHEMA_VERSION } from './schema';
export type {
  PostgresPendingStoreOptions,
  PostgresStoreConnectionOptions,
  PostgresStoreSharedPoolOptions,
  PostgresStoreCommonOptions,
} from './options';
