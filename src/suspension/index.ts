export { ResumeCoordinator, DEFAULT_LEASE_MS } from './coordinator';
export type { ResumeCoordinatorOptions, ExecuteOptions, WaitFor, ExpectedCall } from './coordinator';
export { formatRefusal, DEFAULT_MAX_CHAIN } from './answers';
export type { FormatRefusal, Refusal, RefusalStatus } from './answers';
export type {
  SuspensionStore,
  SuspendedCall,
  SuspensionStatus,
  SettledStatus,
  SuspensionFilter,
  Claim,
  Settlement
} from './store';
export type { PendingStore, RunStore, RunCheckpoint } from '../runner/store';
export type { RunListing, StaleRunFilter } from '../runner/store';
export { redactCall } from './redact';
export type { SuspensionObserver } from './observer';
export { MAX_COMMENT_LENGTH } from './audit';
export type { Principal, Audit, ResolveOptions, HistoryFilter } from './audit';
export { SUSPENSION_STATUSES, isSettled, isSuspensionStatus } from './status';
export { MemorySuspensionStore } from './memory';
export type { MemorySuspensionStoreOptions } from './memory';
export { MemoryStore } from '../stores/memory/store';
export type { MemoryStoreOptions } from '../stores/memory/store';
export { SqliteStore, SQLITE_SCHEMA_VERSION } from '../stores/sqlite/index';
export type { SqliteStoreOptions } from '../stores/sqlite/index';
export { PostgresStore, POSTGRES_STORE_SCHEMA_VERSION } from '../stores/postgres/index';
export type {
  PostgresStoreOptions,
  PostgresStoreConnectionOptions,
  PostgresStoreSharedPoolOptions,
  PostgresStoreCommonOptions,
} from '../stores/postgres/index';
