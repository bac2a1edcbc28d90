/**
 * The root entry, `toolnexus-ts`: the public API, by name. Everything not listed here is
 * internal and may change in any release; test/package/exports.test.ts pins this list, so a
 * name is added here on purpose or not at all.
 *
 * Other entries: `toolnexus-ts/sqlite`, `toolnexus-ts/postgres` (the durable stores, their
 * schema versions and option types; the classes are also exported here, deprecated),
 * `toolnexus-ts/nest` (NestJS), `toolnexus-ts/testing` (for store authors: the conformance
 * suites and the `Claim` and `Settlement` types a store implements). The store classes' types name no type of their drivers, so importing
 * the root needs neither `@types/pg` nor `@types/better-sqlite3`; the drivers themselves are
 * optional peers, loaded when a store is built.
 */
import 'reflect-metadata';

// Import cost (issue 26; docs/design.md, "Entries"): the root loads the Toolkit's path eagerly
// (results, errors, decorators, schema, toolkit); every name exported `from './root-lazy'`
// loads its module on first read. A new value export from a module outside that path goes
// through root-lazy.js and root-lazy.d.ts (CONTRIBUTING.md, "What the root entry loads").

// Tool results and the answers that settle suspensions.
export { success, failure, pending, authRequired, pendingOf, isToolResult, sanitizeName } from './results';
export type { ToolResult, PendingRequest, PendingRequestInit, Answer, AnswerReason, AnsweredRequest } from './results';
export { withContent, contentOf } from './results';
export type { ToolContent, ToolResourceContent } from './results';

// Errors: every class is public, matched on its stable `code`.
export * from './errors';

// Declaring tools.
export { Tool, Describe, Sensitive } from './decorators';
export type { ToolOptions, ApprovalPolicy, ClassType, AnyClass } from './decorators';
export type { ToolAnnotations } from './decorators';
export { schemaForClass } from './schema';
export type { JsonSchema } from './schema';
export { Toolkit, defaultToolName, answerFor, defineTool, isFunctionTool, REDACTED } from './toolkit';
export type {
  ToolkitOptions,
  ToolResolver,
  Registrable,
  RegisteredTool,
  ToolContext,
  ReplayInfo,
  ToolLogLevel,
  FunctionTool,
  DtoFunctionToolSpec,
  SchemaFunctionToolSpec,
  ToolkitHooks,
  BeforeToolEvent,
  AfterToolEvent,
  ToolMetricEvent,
  OpenAITool,
  AnthropicTool,
  GeminiTools,
} from './toolkit';

// Suspending and resuming calls, and the stores that keep them.
export { ResumeCoordinator, DEFAULT_LEASE_MS, formatRefusal, DEFAULT_MAX_CHAIN, MemoryStore } from './root-lazy';
// Operating suspensions: the audit trail and what is shown of a call (docs/operating.md).
export { redactCall, MAX_COMMENT_LENGTH } from './root-lazy';
export type { Principal, Audit, ResolveOptions, HistoryFilter, SuspensionObserver } from './suspension';
export { Webhooks, signWebhook, verifyWebhook } from './root-lazy';
export type {
  WebhooksOptions,
  WebhookDelivery,
  WebhookFailure,
  WebhookVerification,
  WebhookEvent,
  WebhookPayload,
  WebhookSuspension,
} from './webhooks';
export type {
  ResumeCoordinatorOptions,
  ExecuteOptions,
  WaitFor,
  FormatRefusal,
  Refusal,
  RefusalStatus,
  PendingStore,
  SuspensionStore,
  RunStore,
  SuspendedCall,
  SuspensionStatus,
  SettledStatus,
  SuspensionFilter,
  RunCheckpoint,
} from './suspension';
export type { RunListing, StaleRunFilter } from './suspension';
// The durable stores' home is their entry (`toolnexus-ts/sqlite`, `toolnexus-ts/postgres`),
// with their schema versions and option types; the root keeps the classes one release.
export { SqliteStore, PostgresStore } from './root-lazy';
export type { SqliteStoreOptions } from './stores/sqlite';
export type { PostgresStoreOptions } from './stores/postgres';

// Running agents against chat models.
export { AgentRunner, OpenAIChatModel, AnthropicModel, FunctionModel, RUN_STATE_FORMAT } from './root-lazy';
// Answering a suspension as a principal, from any front end (docs/design.md, "the path of an answer").
export { answerAs } from './root-lazy';
export type { AnswerAsOptions, Answered } from './runner';
export { OpenAIResponsesModel, GeminiModel } from './root-lazy';
export type { OpenAIResponsesModelOptions, GeminiModelOptions } from './runner';
// A RunResult fit to return to a client: @Sensitive values redacted in every copy (docs/agents.md).
export { redactRun } from './root-lazy';
export type { ToolCallStatus } from './runner';
export type {
  AgentRunnerOptions,
  RunOptions,
  ResumeOptions,
  AgentToolContext,
  OpenAIChatModelOptions,
  AnthropicModelOptions,
  AnthropicThinking,
  AnthropicPromptCache,
  FunctionModelReply,
  FunctionToolCall,
  ModelFunction,
  HttpModelOptions,
  RetryOptions,
  RunState,
  RunPhase,
  ChatModel,
  ChatMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
  ToolCall,
  ToolCallRecord,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  ProviderItem,
  OutputFormat,
  ModelMetricEvent,
  ModelTool,
  Usage,
  RunEvent,
  RunResult,
  RunResultBase,
  DoneRunResult,
  PendingRunResult,
  HaltedRunResult,
  IncompleteRunResult,
  RunStatus,
} from './runner';
// Durable steps and recovery of runs whose driver died (docs/agents.md, "Durable steps").
export type { Durability, OrphanRecovery, RunStep, StepCall } from './runner';
// Agents as tools of other agents (docs/agents.md, "Sub-agents").
export { SubAgentInput, SubAgentTool } from './root-lazy';
export type { SubAgentToolOptions, SubAgentRecord, SubAgentOrigin } from './runner';
// Handing a conversation to another agent (docs/agents.md, "Handoffs").
export type { HandoffOptions } from './runner';
/** Where time comes from (the Webhooks' `clock` option): a fake one steps through backoff in tests. */
export type { Clock, ClockTimer } from './timing/clock';
export type { MemoryStoreOptions } from './suspension';
export { SEMCONV_VERSION } from './telemetry';
export type { TelemetryOptions, TelemetryOption, TracerProviderLike, MeterProviderLike } from './telemetry';
// Sessions (docs/chat.md): conversations kept by id on the pending stores.
export type { SessionStore, StoredSession, SessionSummary, SessionFilter, ActiveRun } from './sessions/store';
// Context management (docs/chat.md, "Context"): beforeModel / afterModel and two strategies.
export { trimToTokens, summarizeOlder, trimExchanges, roughTokens } from './root-lazy';
export type { ModelCall, BeforeModel, AfterModel, TrimOptions, SummarizeOptions, TokenEstimate } from './runner/transcript';
