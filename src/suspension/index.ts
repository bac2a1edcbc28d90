/**
 * The suspension entry, `toolnexus-ts/suspension`: suspending and resuming tool calls
 * exactly once (`ResumeCoordinator`), the answers and refusals that settle them, the store
 * contract a suspension store implements (`SuspensionStore`, its records, `Claim` and
 * `Settlement`, and the errors a store throws), who answered (`Principal`, `Audit`), the
 * observers that watch settlements, and `redactCall` for showing a call (docs/suspension.md,
 * docs/operating.md). The stores themselves are in `toolnexus-ts/memory`, `/sqlite`, `/postgres`.
 */
export { ResumeCoordinator, DEFAULT_LEASE_MS } from './coordinator';
export type {
  ResumeCoordinatorOptions,
  ExecuteOptions,
  WaitFor,
  ExpectedCall,
  CheckedAnswer,
  AnswerWithCall,
  ResolveOptions,
  IfClaimed,
} from './coordinator';
export type { LapsedTakeover, RecoverLapsedOptions } from './sweep';
export { formatRefusal, DEFAULT_MAX_CHAIN } from './answers';
export type { FormatRefusal, Refusal, RefusalStatus } from './answers';
export type {
  SuspensionStore,
  SuspendedCall,
  SuspensionStatus,
  SettledStatus,
  SuspensionFilter,
  AnsweredRequest,
  Claim,
  EarlyClaim,
  Settlement,
  SettledPage,
  SettledPageQuery,
} from './store';
export { redactCall } from './redact';
export type { SuspensionObserver } from './observer';
export { rulesPolicy } from './policy';
export type { AnswerPolicy, AnswerDecision, AnswerQuestion, AnswerRule, AnswerAction } from './policy';
export type { AnswerRefusal } from './authority';
export type { Grant, GrantFilter, GrantInit, GrantOptions, GrantScope, GrantStore } from './grants';
export type { AutomaticAnswers, AutomaticDecision, AutomaticQuestion, AutomaticRecord } from './automatic';
export type { Signature } from '../results/wire';
export type { Receipt, ReceiptInit } from '../toolkit/context';
export { MAX_RECEIPTS } from './receipts';
export type { KeyedCallStore, KeyedStart } from './keyed';
export { KeyLostError } from './keyed';
export { MAX_COMMENT_LENGTH } from './audit';
export type { Principal, Audit, HistoryFilter } from './audit';
/** Where time comes from (a coordinator's, store's, runner's or webhooks' `clock`): a fake one steps through leases and backoff in tests. */
export type { Clock, ClockTimer } from '../timing/clock';
export {
  UnknownSuspensionError,
  AlreadyResolvedError,
  InvalidAnswerError,
  UnregisteredToolError,
  ClaimHeldError,
  ClaimLostError,
  SuspensionMismatchError,
  DuplicateSuspensionError,
  StoreError,
  StoreUnavailableError,
  AnswerRefusedError,
} from '../errors';
export { ContentBound, DEFAULT_MAX_INLINE_BYTES } from './content';
export type { ContentOptions, ContentStore } from './content';
export { MemoryContentStore, FileContentStore } from './content-stores';
export type { FileContentStoreOptions } from './content-stores';
export { MemorySuspensionStore } from './memory';
export type { MemorySuspensionStoreOptions } from './memory';
