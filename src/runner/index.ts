/**
 * The agents entry, `toolnexus-ts/agents`: the `AgentRunner` that drives a chat model over a
 * Toolkit, its run results, events and checkpointed state, the run store it keeps them in
 * (`RunStore`), answering a halted run as a principal (`answerAs`), sub-agents and handoffs,
 * the transcript strategies for its `beforeModel` hook, the sessions that keep conversations,
 * and the errors a run throws (docs/agents.md, docs/chat.md). The models are in
 * `toolnexus-ts/models`.
 */
export { AgentRunner } from './agent-runner';
export type { AgentRunnerOptions, RunOptions, ResumeOptions, AgentToolContext, OrphanRecovery } from './agent-runner';
export type { Durability } from './durability/durable';
export type { WithOutput } from './core/options';
export type { Recovery, RecoveryOptions, RecoveryProblem, RecoveryTick } from './recovery';
export type { HandoffOptions } from './features/handoff';
export { SubAgentInput, SubAgentTool } from './sub-agent';
export type { SubAgentToolOptions, SubAgentRecord, SubAgentOrigin } from './sub-agent';
export { answerAs } from './answer-as';
export type { AnswerAsOptions, Answered, AnsweredRun } from './answer-as';
export { RUN_STATE_FORMAT } from './core/state';
export type { RunState, RunPhase, HaltedCall, RunDriver, RunStep, StepCall } from './core/state';
export { redactRun } from './redact-run';
export type {
  ToolCallRecord,
  ToolCallStatus,
  ModelMetricEvent,
  RunEvent,
  RunResult,
  RunResultBase,
  DoneRunResult,
  HaltedRunResult,
  IncompleteRunResult,
  StoppedRunResult,
  RunStatus,
  RunStop,
  BudgetLimit,
} from './core/types';
export type { Budget, ModelPrice, Prices, Spend } from './core/budget';
export type {
  Guardrail,
  GuardrailFunction,
  GuardrailCheck,
  GuardrailOptions,
  GuardrailVerdict,
  GuardrailContext,
  GuardrailRecord,
  GuardrailStage,
  GuardrailSubject,
  InputSubject,
  OutputSubject,
  ToolInputSubject,
  ToolOutputSubject,
  HoldBack,
} from './core/guardrails/types';
export type { RunStore, RunCheckpoint, RunListing, StaleRunFilter, SteerQueued, StoredSteer } from './core/store';
export type { PrunableStore, PruneOptions, PruneReport, PrunedBatch } from './durability/retention';
export { trimToTokens, summarizeOlder, trimExchanges, roughTokens } from './core/transcript';
export type { ModelCall, BeforeModel, AfterModel, TrimOptions, SummarizeOptions, TokenEstimate } from './core/transcript';
export type { SessionStore, StoredSession, SessionSummary, SessionFilter, ActiveRun, SessionSpending } from '../sessions/store';
export type { StreamLogStore, StreamSlice } from '../sessions/stream-log';
export { cancelRun } from './core/cancel';
export type { CancelOptions } from './core/cancel';
export { MAX_QUEUED_STEERS, MAX_STEER_CHARS } from './core/steer';
export type { SteerMessage, SteerOptions, SteerReceipt } from './core/steer';
export {
  RunCancelledError,
  RunNotFoundError,
  RunConflictError,
  RunCheckpointError,
  InvalidResumeError,
  OutputValidationError,
  SessionBusyError,
  SessionFullError,
} from '../errors';
