import { messageOf } from '../../errors/message';
import type { WaitFor } from '../../suspension/answers';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import type { Telemetry } from '../../telemetry/telemetry';
import type { Clock } from '../../timing/clock';
import type { AbortLatch } from '../../timing/abort-latch';
import type { ToolContext } from '../../toolkit/context';
import { withIdempotencyKey } from '../../suspension/idempotency';
import type { Principal } from '../../suspension/audit';
import type { ChatMessage, ChatModel, ModelTool, Usage } from '../../models/types';
import type { RunTrace } from './agent-spans';
import type { RunFeatures } from './feature';
import type { Guardrails } from './guardrails/check';
import type { GuardrailRecord } from './guardrails/types';
import type { Budget, Prices, SessionBudget, Spend } from './budget';
import type { Checkpoints } from './checkpoints';
import { cancelStopOf } from './cancel-stop';
import type { DriverLease } from './lease';
import type { SteerQueue } from './steer';
import { outputState, type OutputRun } from './output';
import { RUN_STATE_FORMAT, type RunState, type SteerMessage } from './state';
import type { AfterModel, BeforeModel } from './transcript/hooks';
import type { Durability, ModelMetricEvent, RunEvent, RunResult, RunStop, ToolCallRecord } from './types';

/**
 * The context a tool receives from the runner: the run's `context`, plus `signal`, the
 * provider's `callId` and the `runId` of the run that made the call (a sub-agent tool names
 * its child run after both).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the neutral element of `&`
export type AgentToolContext<TState extends object = {}> = ToolContext<TState & { callId: string; runId?: string }>;

/** Where a run's events go (the stream), when someone listens. */
export type Emit = (event: RunEvent) => void;

/** What driving a run needs from its runner, or from the agent a handoff gave the conversation to. */
export interface AgentParts {
  model: ChatModel;
  coordinator: ResumeCoordinator;
  checkpoints: Checkpoints;
  systemPrompt?: string;
  maxTurns: number;
  /** The most tool calls of one turn running at once (`Infinity`: all). */
  maxParallelTools: number;
  waitFor?: WaitFor;
  /** Told of every model call (provider, turn, usage, duration). */
  onMetric?: (event: ModelMetricEvent) => void;
  /** When runs are checkpointed: on halt only, or after every step. */
  durability: Durability;
  /** This agent's name, when it takes part in handoffs. */
  agent?: string;
  /** The parts of the agent named `name`, this one or one reachable by handoffs; undefined when unknown. */
  agentParts?(name: string): AgentParts | undefined;
  /** OpenTelemetry spans and metrics of runs and model calls. */
  telemetry: Telemetry;
  /** The runner's clock: driver leases, and the pace of progress events. */
  clock: Clock;
  /** Rewrites each request before it is sent (context management, docs/chat.md). */
  beforeModel?: BeforeModel;
  /** Sees each answer before the run uses it. */
  afterModel?: AfterModel;
  /** The guardrails on input, text and tool calls, when the runner has some. */
  guardrails?: Guardrails;
  /** What each model costs, when the runner was given prices. */
  prices?: Prices;
  /** The runner's budget for each run (a run's own `budget` option replaces it). */
  budget?: Budget;
  /** The runner's budget for each session's runs together. */
  sessionBudget?: Budget;
  /** The runs this runner drives now, by id: what `cancel` aborts. */
  driving?: Map<string, Driving>;
  /** The run features (cancel, budget, progress) composed once, which the loop calls at its fixed points. */
  features: RunFeatures;
  /** The toolkit's tools as offered now. */
  tools(): readonly ModelTool[];
}

/** A run this process drives: its cancellation, and its outcome once it ends. */
export interface Driving {
  readonly latch: AbortLatch;
  ended?: Promise<RunResult>;
  /** On whose behalf the run was made: who may cancel it while it runs, with an answer policy set. */
  readonly principal?: Principal;
  /** The messages steered into it, which its next turn takes. */
  readonly steering?: SteerQueue;
}

/** The working state of one run while this process drives it. */
export interface LiveRun {
  runId: string;
  messages: ChatMessage[];
  toolCalls: ToolCallRecord[];
  turns: number;
  usage: Usage;
  /** Each model call's counts, in turn order. */
  turnUsage: Usage[];
  text: string;
  /** The typed answer the run asks for, when it asks for one. */
  output?: OutputRun;
  /** The checkpoint version this process last read or wrote; 0 when the run was never checkpointed. */
  version: number;
  tools: readonly ModelTool[];
  /**
   * The run's one cancellation: a `cancel`, the caller's signal, a stream's consumer leaving or
   * a lost lease abort it (each with its own reason), and the loop reads it between steps.
   */
  latch: AbortLatch;
  /**
   * The latch's real signal, which the model calls and the tools get: made only when someone
   * can cancel the run while a call is in flight (see `armed`). A plain run has none, so it
   * pays no signal and no listener per model attempt or tool call; a `cancel` stops it at its
   * next step.
   */
  signal?: AbortSignal;
  context?: object;
  emit?: Emit;
  /** The driver lease this process renews while it drives a checkpointed run (a resumed one, or one with durable steps). */
  lease?: DriverLease;
  /** The agent holding the conversation, once a handoff moved it (the runner's own agent until then). */
  agent?: string;
  /** The guardrails' checks so far, once one was made. */
  guardrails?: GuardrailRecord[];
  /** Feedback rounds the guardrails took so far. */
  feedbacks?: number;
  /** The most the run may spend, when it has a budget. */
  budget?: Budget;
  /** Its session's budget and what the session spent before it, when the runner has a `sessionBudget`. */
  sessionBudget?: SessionBudget;
  /** What it spent besides tokens, when it has a budget or the runner has prices. */
  spend?: Spend;
  /** When (`clock`) this process began driving it, for its wall time; set with `spend`. */
  drivenSince?: number;
  /** The runner's clock, set with `spend`. */
  clock?: Clock;
  /** What its last model call cost, for the budget's guess at the next one. */
  lastCostUsd?: number;
  /**
   * The stop a feature made in this turn by refusing a call (a guardrail's block, a spent
   * budget): the run stops once the turn's calls are in. The first made wins.
   */
  stop?: RunStop;
  /** The input guardrails' check running beside the first model call (`parallelInput`), until the first turn takes it. */
  inputCheck?: Promise<RunStop | 'feedback' | undefined>;
  /** The run's span while a tracer records it; its `traceparent` is checkpointed when the run halts. */
  trace?: RunTrace;
  /** On whose behalf the run is made: recorded with every suspension it raises. */
  principal?: Principal;
  /** The session the run belongs to, kept in the checkpoint so a resume's span names the same conversation. */
  session?: string;
  /** The messages steered into it (`AgentRunner.steer`), which the steering feature takes at each turn's start. */
  steering?: SteerQueue;
  /** The messages this turn took, until the input guardrails judged them. */
  steered?: SteerMessage[];
}

/** The context each call gets: a shallow copy of the run's, plus the run's signal and the call's id. */
export function callContext(
  context: object | undefined,
  signal: AbortSignal | undefined,
  callId: string,
  runId?: string,
  principal?: Principal,
): AgentToolContext {
  const ctx: AgentToolContext = runId === undefined ? { ...context, callId } : { ...context, callId, runId };
  if (signal) ctx.signal = signal;
  withIdempotencyKey(ctx, { runId, callId });
  // A sub-agent's child run is made on behalf of the same principal.
  if (principal !== undefined) Object.assign(ctx, { [RUN_PRINCIPAL]: principal });
  return ctx;
}

/** Where a call's context carries its run's principal to a sub-agent: a symbol, so no host key collides with it. */
export const RUN_PRINCIPAL = Symbol.for('toolnexus:run-principal');

/** Where a call's context carries what is left of its run's budget to a sub-agent. */
export const RUN_BUDGET = Symbol.for('toolnexus:run-budget');

/** The checkpoint state of a live run. */
export function snapshot(live: LiveRun, phase: RunState['phase'], halted: RunState['halted']): RunState {
  const state: RunState = {
    format: RUN_STATE_FORMAT,
    phase,
    messages: live.messages,
    toolCalls: live.toolCalls,
    turns: live.turns,
    usage: live.usage,
    turnUsage: live.turnUsage,
    text: live.text,
  };
  if (live.output) state.output = outputState(live.output);
  if (live.agent !== undefined) state.agent = live.agent;
  if (live.principal !== undefined) state.principal = live.principal;
  if (live.session !== undefined) state.session = live.session;
  if (halted) state.halted = halted;
  if (live.guardrails) state.guardrails = { records: live.guardrails, feedbacks: live.feedbacks ?? 0 };
  if (live.budget) state.budget = live.budget;
  if (live.sessionBudget) state.sessionBudget = live.sessionBudget;
  const steering = live.steering?.untaken();
  if (steering) state.steering = steering;
  const spend = spendSoFar(live);
  if (spend) state.spend = spend;
  const traceparent = live.trace?.tracing.traceparentOf(live.trace.span);
  if (traceparent !== undefined) state.traceparent = traceparent;
  return state;
}

/**
 * The run stops on `error`: this process stops driving it, and a checkpointed run is saved
 * as `failed` with its (balanced) transcript, so `recover` (or the same answer again) can
 * continue it. The error is the caller's to throw.
 */
export async function stopFailed(parts: AgentParts, live: LiveRun, error: unknown): Promise<void> {
  await live.lease?.stop();
  // A cancel's abort is no failure: the loop writes the run `cancelled` next, and a `failed`
  // checkpoint in between is one a `recover` elsewhere could take over.
  if (live.version === 0 || cancelStopOf(live.latch)) return;
  const state = snapshot(live, 'failed', undefined);
  state.error = messageOf(error);
  try {
    await parts.checkpoints.save(live, state);
  } catch {
    // The run's own error is what the caller must see; the driver lease lapses and the run can be taken over.
  }
}

/** What the run spent besides tokens, its wall time in this process included; undefined when not counted. */
export function spendSoFar(live: LiveRun): Spend | undefined {
  const spend = live.spend;
  if (!spend) return undefined;
  const since = live.drivenSince;
  const now = live.clock?.now();
  return { ...spend, wallMs: spend.wallMs + (since === undefined || now === undefined ? 0 : now - since) };
}

/**
 * Registers a run in `driving` until `ended` settles, so the runner's `cancel` reaches it (a
 * run already registered, by the caller that drives it, is left to that caller).
 */
export function whileDriving(
  driving: Map<string, Driving> | undefined,
  runId: string,
  latch: AbortLatch,
  ended: Promise<RunResult>,
  principal?: Principal,
  steering?: SteerQueue,
): Promise<RunResult> {
  if (!driving || driving.has(runId)) return ended;
  // One shape for every entry (no spreads of optional parts): the absent ones read undefined either way.
  const entry: Driving = { latch, ended, principal, steering };
  driving.set(runId, entry);
  const release = (): void => {
    // A run that failed left its loop without closing it: a later steer goes to its checkpoint.
    steering?.close();
    if (driving.get(runId) === entry) driving.delete(runId);
  };
  // One `then` rather than an async function's try/finally: one promise a run instead of three.
  return ended.then(
    (result) => {
      release();
      return result;
    },
    (error: unknown) => {
      release();
      throw error;
    },
  );
}
