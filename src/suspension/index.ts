export { ResumeCoordinator, DEFAULT_LEASE_MS } from './coordinator';
export type { ResumeCoordinatorOptions, ExecuteOptions, WaitFor, ExpectedCall } from './coordinator';
export { formatRefusal, DEFAULT_MAX_CHAIN } from './answers';
export type { FormatRefusal, Refusal, RefusalStatus } from './answers';
export type {
  PendingStore,
  SuspensionStore,
  RunStore,
  SuspendedCall,
  SuspensionStatus,
  SettledStatus,
  SuspensionFilter,
  Claim,
  Settlement,
  RunCheckpoint,
} from './store';
export type { RunListing, StaleRunFilter } from './store';
export { redactCall } from './redact';
export type { SuspensionObserver } from './observer';
export { MAX_COMMENT_LENGTH } from './audit';
export type { Principal, Audit, ResolveOptions, HistoryFilter } from './audit';
export { SUSPENSION_STATUSES, isSettled, isSuspensionStatus } from './status';
export { MemoryPendingStore } from './stores/memory';
export type { MemoryPendingStoreOptions } from './stores/memory';
export { SqlitePendingStore, SQLITE_SCHEMA_VERSION } from './stores/sqlite';
export type { SqlitePendingStoreOptions } from './stores/sqlite';
export { PostgresPendingStore, POSTGRES_STORE_SCHEMA_VERSION } from './stores/postgres';
export type {
  PostgresPendingStoreOptions,
  PostgresStoreConnectionOptions,
  PostgresStoreSharedPoolOptions,
  PostgresStoreCommonOptions,
} from './stores/postgres';
