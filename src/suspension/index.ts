export { ResumeCoordinator, DEFAULT_LEASE_MS } from './coordinator';
export type { ResumeCoordinatorOptions, ExecuteOptions, WaitFor } from './coordinator';
export { formatRefusal, DEFAULT_MAX_CHAIN } from './answers';
export type { FormatRefusal, Refusal, RefusalStatus } from './answers';
export type { PendingStore, RunStore, SuspendedCall, SuspensionStatus, SettledStatus, SuspensionFilter, Claim, Settlement, RunCheckpoint } from './store';
export { SUSPENSION_STATUSES, isSettled, isSuspensionStatus } from './status';
export { MemoryPendingStore } from './stores/memory';
