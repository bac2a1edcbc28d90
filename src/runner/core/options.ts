import { InvalidArgumentError } from '../../errors';
import type { ClassType } from '../../decorators/types';
import type { WaitFor } from '../../suspension/answers';
import type { Audit, Principal } from '../../suspension/audit';
import { DEFAULT_LEASE_MS, type ResumeCoordinator } from '../../suspension/coordinator';
import type { SessionStore } from '../../sessions/store';
import type { TelemetryOption } from '../../telemetry/options';
import type { Clock } from '../../timing/clock';
import type { Toolkit } from '../../toolkit/toolkit';
import type { ChatMessage, ChatModel } from '../../models/types';
import type { Skills } from '../../skills/skills';
import type { RunStore } from './store';
import type { GuardrailOptions } from './guardrails/types';
import type { Budget, Prices } from './budget';
import type { AfterModel, BeforeModel } from './transcript/hooks';
import type { Durability, ModelMetricEvent, RunResult } from './types';

/** Options of an {@link AgentRunner}. */
export interface AgentRunnerOptions {
  model: ChatModel;
  toolkit: Toolkit;
  /**
   * Records suspensions and replays them on `resume`. Give one with a durable store
   * (`SqliteStore`, `PostgresStore`) to resume from another process; it must
   * use this runner's toolkit. Default: a coordinator over an in-memory store (resume in this process only).
   */
  coordinator?: ResumeCoordinator;
  /**
   * Where run checkpoints are kept. Default: the coordinator's store, when it is a
   * {@link RunStore} too (the three built-in stores are); give one when it is not.
   */
  runs?: RunStore;
  systemPrompt?: string;
  /**
   * Skills the model may load (`loadSkills` of `toolnexus-ts/skills`): their `skill` tool is
   * registered on the toolkit (unless one of that name is there) and their catalog follows the
   * system prompt after a blank line (docs/skills.md).
   */
  skills?: Skills;
  /** Model calls one run may make before it ends `incomplete`. Default 10. */
  maxTurns?: number;
  /**
   * The most tool calls of one turn that run at once; the others wait, and the results still
   * go back in call order. Also bounds the replays of answers given to a halted run together.
   * Default: all of a turn's calls at once (docs/agents.md, "Limits").
   */
  maxParallelTools?: number;
  /**
   * In-process posture: a suspended call awaits `waitFor(request)` and is replayed with
   * the answer inline (and along its chain); the run never halts. Without it, a suspension halts the run durably.
   */
  waitFor?: WaitFor;
  /**
   * How long a resumed run's driver holds it without renewal; it renews every third of
   * this. A run whose driver died is taken over by `recover` or a repeated `resume` once
   * its lease has lapsed (judged by process clocks). Default 60 000 ms.
   */
  runLeaseMs?: number;
  /**
   * Where the driver lease takes its time: its renewals, the lapse `recover` and `resume` judge,
   * and the checkpoints' timestamps. Default: the system clock; tests pass a fake one to step
   * through renewals and lapses. (A model's retries take their own `clock`, `HttpModelOptions.clock`.)
   */
  clock?: Clock;
  /**
   * Told of every model call: provider, run, turn, token counts and duration. A sink that
   * throws is ignored. (Tool calls have the toolkit's own `onMetric` hook.)
   */
  onMetric?: (event: ModelMetricEvent) => void;
  /**
   * Checks on the user's input, each turn's text (held back while streaming until it passes),
   * and each tool call's arguments and result: each allows, blocks (the run ends `blocked`),
   * or gives feedback the model reads (docs/guardrails.md).
   */
  guardrails?: GuardrailOptions;
  /**
   * The most each run may spend: tokens, US dollars (needs `prices`), tool calls, wall time.
   * A run past it ends `budget_exceeded` (docs/agents.md, "Budgets"). A run's own `budget` replaces it.
   */
  budget?: Budget;
  /**
   * The most the runs of one session may spend together (docs/agents.md, "Budgets"): each run
   * of a session counts what the session's ended runs spent, kept with the session; a run that
   * would pass it ends `budget_exceeded` with `scope: 'session'`, and once it is spent the
   * session's next run stops before its first model call. Needs `sessions`.
   */
  sessionBudget?: Budget;
  /** What each model costs (US dollars per million tokens), by `ChatModel.model`: runs then report `spend.costUsd`. */
  prices?: Prices;
  /** Repair rounds a typed answer (`output`) gets after its first attempt fails validation. Default 2. */
  maxOutputRepairs?: number;
  /**
   * When runs are checkpointed. `'halt'` (default): when a run halts, and while a resumed run
   * is driven; a run that never suspends is never written. `'step'`: also when it starts,
   * after every model response and around every tool call, under the driver lease, so a run
   * whose process died is continued by {@link AgentRunner.recover} (or
   * {@link AgentRunner.recoverOrphans}) from its last step: no recorded response is asked
   * again, no recorded tool result is run again (docs/agents.md, "Durable steps").
   */
  durability?: Durability;
  /**
   * This agent's name: needed to take part in handoffs ({@link AgentRunner.handoffTo}), where
   * the checkpoint records which agent holds the conversation. Every agent a run may reach
   * needs its own name, and all must share one store.
   */
  name?: string;
  /**
   * OpenTelemetry: `invoke_agent` per run and per resume, `chat` per model call and the
   * gen_ai client histograms, by the global providers unless this picks others or turns
   * them off. Tool spans are the toolkit's, resolutions the coordinator's: give each the
   * same option (docs/observability.md).
   */
  telemetry?: TelemetryOption;
  /**
   * Where conversations are kept for the `session` option of `run`/`stream`. Default: the
   * coordinator's store (each of the three stores is a session store). docs/chat.md, "Sessions".
   */
  sessions?: SessionStore;
  /**
   * The most messages a session's thread may hold. Input that would pass it is refused before
   * the run (`SessionFullError`); a run that grows the thread past it has the oldest turns
   * dropped when it writes the thread back, its own turn kept whole (refused with
   * `SessionFullError`, the session unchanged, when that turn alone passes it). Default 10 000.
   */
  maxSessionMessages?: number;
  /** The most bytes (as JSON) a session's thread may hold; as `maxSessionMessages`. Default 8 MiB. */
  maxSessionBytes?: number;
  /**
   * How long a run holds its session while it runs; a process that died holding one frees
   * it after this. Longer runs are taken over. Default 600 000 ms (10 minutes).
   */
  sessionHoldMs?: number;
  /**
   * Rewrites each model request before it is sent: messages, tools, system prompt (a copy;
   * the run's transcript is unchanged). `trimToTokens` and `summarizeOlder` are two. docs/chat.md, "Context".
   */
  beforeModel?: BeforeModel;
  /** Sees each model answer before the run uses it; may return a changed copy. */
  afterModel?: AfterModel;
}

/** What {@link AgentRunner.recoverOrphans} did with one orphaned run. */
export type OrphanRecovery =
  /** This process took the run over: where it stands now (`done`, or `halted`: on a `recovery` request, say). */
  | { runId: string; status: 'recovered'; result: RunResult }
  /** Another process took it first, or its driver renewed its lease after all. */
  | { runId: string; status: 'taken' }
  /** Taking it over failed (the model failed again, say): the error, and the run is left for a later attempt. */
  | { runId: string; status: 'failed'; error: Error };

/** Options of {@link AgentRunner.run} and {@link AgentRunner.stream}. */
export interface RunOptions {
  /** Names the run (its checkpoint key). Default: `run-` + a random UUID. */
  runId?: string;
  /** Cancels the run: model calls abort, tools see it as `ctx.signal`. */
  signal?: AbortSignal;
  /** The most this run may spend, in place of the runner's `budget`. */
  budget?: Budget;
  /** Host state every tool call gets a shallow copy of (identity, tenant, a DI scope...). */
  context?: object;
  /**
   * Asks for a typed final answer: a class-validator DTO. The model is asked for its JSON
   * Schema (natively where the model has structured output, else through a `final_answer`
   * tool), the answer is validated like tool arguments, and a `done` result carries the
   * DTO instance as `output`. See docs/agents.md, "Typed answers".
   */
  output?: ClassType;
  /** Overrides the runner's `maxOutputRepairs` for this run. */
  maxOutputRepairs?: number;
  /**
   * Continues the conversation kept under this id: the input is appended to its thread, and
   * the run's new turns are written back when it ends or halts (a halted run's later turns
   * when it is resumed, wherever). A session busy with another run refuses with
   * `SessionBusyError`. docs/chat.md, "Sessions".
   */
  session?: string;
  /**
   * On whose behalf the run is made (the signed-in user of a chat, a Nest request's user):
   * recorded with every suspension it raises as `requestedBy`, kept in its checkpoint and
   * handed to its sub-agents, so separation of duties refuses their own approvals
   * (docs/who-may-answer.md).
   */
  principal?: Principal;
}

/**
 * Options of {@link AgentRunner.resume} and {@link AgentRunner.recover}. The context is
 * the host's again: it is never stored. A run that asks for a typed answer needs its DTO
 * class again as `output` (the checkpoint names it; a class cannot be stored).
 */
export interface ResumeOptions {
  signal?: AbortSignal;
  context?: object;
  output?: ClassType;
  /**
   * Recorded with every answer of this resume, as `ResumeCoordinator.resolve` records it:
   * who answered and why (docs/operating.md, "Audit trail").
   */
  audit?: Audit;
}

/** Options that ask for a typed answer: `output` is the DTO class whose instance a `done` result carries (the overloads returning `RunResult<T>`). */
export type WithOutput<O, T extends object> = O & { output: ClassType<T> };

/** A run named by its caller: a non-empty string. */
export function checkRunId(runId: unknown, operation: string): void {
  if (typeof runId !== 'string' || runId === '') throw new InvalidArgumentError(`${operation} needs a runId`);
}

/** A hook option checked: a function, or none. */
export function hook<T>(value: T | undefined, name: string): T | undefined {
  if (value !== undefined && typeof value !== 'function') throw new InvalidArgumentError(`${name} must be a function`);
  return value;
}

/** A transcript entry of the caller's, checked and copied (the run appends to its own copy). */
export function copyMessage(message: ChatMessage): ChatMessage {
  if (typeof message !== 'object' || message === null || !['user', 'assistant', 'tool'].includes(message.role)) {
    throw new InvalidArgumentError('every transcript entry needs a role of "user", "assistant" or "tool"');
  }
  return message.role === 'assistant' && message.toolCalls
    ? { ...message, toolCalls: message.toolCalls.map((call) => ({ ...call })) }
    : { ...message };
}

/** `maxParallelTools` checked: a positive whole number, or none (every call of a turn at once). */
export function limitOf(value: number | undefined): number {
  if (value === undefined) return Infinity;
  if (!Number.isInteger(value) || value < 1)
    throw new InvalidArgumentError(`maxParallelTools must be a positive integer, got ${String(value)}`);
  return value;
}

/**
 * The options an {@link AgentRunner} checks before it uses any: a model and a toolkit, the turn
 * limit and the driver lease (returned with their defaults), the hooks, durability and name.
 *
 * @throws {@link InvalidArgumentError} one is not what it must be.
 */
export function checkRunnerOptions(options: AgentRunnerOptions): { maxTurns: number; runLeaseMs: number } {
  if (!options || typeof options.model?.complete !== 'function')
    throw new InvalidArgumentError('AgentRunner needs a model with a complete() method');
  if (typeof options.toolkit?.execute !== 'function') throw new InvalidArgumentError('AgentRunner needs a toolkit');
  const maxTurns = options.maxTurns ?? 10;
  if (!Number.isInteger(maxTurns) || maxTurns < 1)
    throw new InvalidArgumentError(`maxTurns must be a positive integer, got ${String(options.maxTurns)}`);
  const runLeaseMs = options.runLeaseMs ?? DEFAULT_LEASE_MS;
  if (!Number.isFinite(runLeaseMs) || runLeaseMs <= 0)
    throw new InvalidArgumentError(`runLeaseMs must be a positive number of milliseconds, got ${String(options.runLeaseMs)}`);
  if (options.waitFor !== undefined && typeof options.waitFor !== 'function') throw new InvalidArgumentError('waitFor must be a function');
  if (options.coordinator && options.coordinator.toolkit !== options.toolkit) {
    throw new InvalidArgumentError(
      "the coordinator must use the runner's toolkit: the model is offered one set of tools and must be served by the same",
    );
  }
  if (options.durability !== undefined && options.durability !== 'halt' && options.durability !== 'step')
    throw new InvalidArgumentError(`durability must be 'halt' or 'step', got ${JSON.stringify(options.durability)}`);
  if (options.name !== undefined && (typeof options.name !== 'string' || options.name === ''))
    throw new InvalidArgumentError('name must be a non-empty string');
  return { maxTurns, runLeaseMs };
}
