import type { ChatMessage, ToolCall, Usage } from '../../models/types';
import type { PendingRequest, ToolResult } from '../../results/wire';
import type { GuardrailRecord, GuardrailStage } from './guardrails/types';
import type { Spend } from './budget';
/**
 * What became of one tool call, apart from the wire result (docs/agents.md, "Tool calls"):
 * `ok` ran and succeeded; `error` failed (unknown tool, bad arguments, a throw, a timeout);
 * `pending` is suspended, waiting for its answer (its result is the contract's `pending()`
 * shape, `isError: true`, yet it is no error); `declined`, `expired`, `cancelled` were
 * suspended and refused so (the tool did not run). A closed set: a dashboard counts errors
 * as `status === 'error'`.
 */
export type ToolCallStatus = 'ok' | 'error' | 'pending' | 'declined' | 'expired' | 'cancelled';

/** One tool call of a run with the result that was fed back for it. */
export interface ToolCallRecord {
  id: string;
  name: string;
  arguments: string;
  /** The result fed back to the model, as the wire carries it. */
  result: ToolResult;
  /** What became of the call; read this, not `result.isError`, to count errors. */
  status: ToolCallStatus;
  /** The turn (1-based model call) that asked for it. */
  turn: number;
}

/**
 * How often a run is checkpointed. `halt`: only when it halts (and after a resume), so a run
 * that never suspends costs no I/O, and a driver that dies mid-run loses it. `step`: also at
 * its start, after every model response and around every tool call, so `recover` continues it
 * from its last step (docs/agents.md, "Durable steps").
 */
export type Durability = 'halt' | 'step';

/**
 * How a run ended: `done`, `halted` (a suspension waits for its answer; the run is
 * checkpointed), `incomplete` (the turn limit stopped it), or stopped on purpose: `blocked`
 * (a guardrail), `budget_exceeded` (its budget is spent), `cancelled` (someone cancelled it).
 * The last three are their own statuses, never a successful-looking result, and final: no
 * resume or recover continues them. Before 0.2 a halted run said `'pending'`.
 */
export type RunStatus = 'done' | 'halted' | 'incomplete' | RunStop['status'];

/** Which budget limit a run crossed (docs/agents.md, "Budgets"). */
export type BudgetLimit = 'inputTokens' | 'outputTokens' | 'totalTokens' | 'costUsd' | 'toolCalls' | 'wallMs';

/**
 * Why a run was stopped on purpose; the checkpoint keeps it (JSON), and the run's result
 * carries it. `guardrail` names the guardrail that blocked, `stage` where, `message` its
 * words (shown to whoever runs the app, never to the model).
 */
export type RunStop =
  | {
      status: 'blocked';
      guardrail: string;
      stage: GuardrailStage;
      message: string;
      /** The sub-agents it was blocked in, outermost first, when a sub-agent's guardrail blocked. */
      path?: string[];
    }
  | {
      status: 'budget_exceeded';
      limit: BudgetLimit;
      /** The limit's value. */
      budget: number;
      /** What was spent of it. */
      spent: number;
      /** `session`: the limit is the runner's `sessionBudget`, and `spent` what the session's runs spent together. */
      scope?: 'session';
    }
  | { status: 'cancelled'; reason?: string };

/** What every outcome of `run` and `resume` carries. */
export interface RunResultBase {
  /** Token counts summed over every model call of the run, including those before a halt. */
  usage: Usage;
  /** Token counts of each model call, in order (`turnUsage[i]` is turn `i + 1`). */
  turnUsage: Usage[];
  /** The model's last text (its answer when `done`). */
  text: string;
  /** The whole transcript, without the system prompt. */
  messages: ChatMessage[];
  /** Every tool call so far, in the order asked; a call still suspended carries its pending result. */
  toolCalls: ToolCallRecord[];
  /** Model calls made so far. */
  turns: number;
  runId: string;
  /** The guardrails' checks, when the runner has guardrails (docs/guardrails.md). */
  guardrails?: GuardrailRecord[];
  /**
   * What the run spent besides tokens (US dollars at the runner's `prices`, tool calls, wall
   * time driving it), when it has a budget or the runner has prices (docs/agents.md, "Budgets").
   */
  spend?: Spend;
}

/**
 * The model answered without tool calls. With a typed answer asked for (`output` of
 * `run`), `output` is the validated DTO instance; otherwise it is `undefined`.
 */
export interface DoneRunResult<TOutput = unknown> extends RunResultBase {
  status: 'done';
  output: TOutput;
  pending?: undefined;
  pendings?: undefined;
  limit?: undefined;
  stop?: undefined;
}

/** A tool suspended and the run is checkpointed until `resume`: the run is halted. */
export interface HaltedRunResult extends RunResultBase {
  status: 'halted';
  /** The first open suspension in call order. */
  pending: PendingRequest;
  /** Every open suspension in call order. */
  pendings: PendingRequest[];
  limit?: undefined;
  output?: undefined;
  stop?: undefined;
}

/** A limit stopped the run. */
export interface IncompleteRunResult extends RunResultBase {
  status: 'incomplete';
  limit: 'maxTurns';
  pending?: undefined;
  pendings?: undefined;
  output?: undefined;
  stop?: undefined;
}

/**
 * A guardrail blocked the run, a budget was spent, or someone cancelled it: `stop` says
 * which and why. No resume continues it.
 */
export interface StoppedRunResult extends RunResultBase {
  status: RunStop['status'];
  stop: RunStop;
  pending?: undefined;
  pendings?: undefined;
  limit?: undefined;
  output?: undefined;
}

/** The outcome of `run` and `resume`, told apart by `status`; `TOutput` is the typed answer's class instance. */
export type RunResult<TOutput = unknown> = DoneRunResult<TOutput> | HaltedRunResult | IncompleteRunResult | StoppedRunResult;

/** One model call of a run, as `AgentRunnerOptions.onMetric` sees it. */
export interface ModelMetricEvent {
  event: 'model';
  /** The model's `provider`. */
  provider: string;
  runId: string;
  /** The turn (1-based model call of the run) this call made. */
  turn: number;
  usage: Usage;
  /** Wall time of the call, from the request to the whole answer. */
  ms: number;
  /** Whether the answer was streamed. */
  streamed: boolean;
}

/**
 * What `stream` yields. An event of a sub-agent (a runner registered with `asTool`) carries
 * `path`: the sub-agent tools from this run down to the agent it happened in (`['research']`,
 * `['research', 'search']`); the run's own events have none.
 */
export type RunEvent = RunEventBody & { path?: string[] };

/** The events of {@link RunEvent}, without their `path`. */
export type RunEventBody =
  | { type: 'text'; delta: string }
  /** The model's thinking or reasoning text as it arrives, when the provider shows it (never fed back as text). */
  | { type: 'reasoning'; delta: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'tool_result'; callId: string; name: string; result: ToolResult }
  | { type: 'pending'; callId: string; request: PendingRequest }
  /**
   * A running tool's `ctx.progress(progress, total?, message?)`: at most one per call every
   * 100 ms (the latest in between kept), the last one before the call's result. The tool's
   * author chooses the message: it is sent as written, so it must hold no secret.
   */
  | { type: 'progress'; callId: string; name: string; progress: number; total?: number; message?: string }
  /** Messages steered into the run (`AgentRunner.steer`) were taken: they join the transcript before this turn's model call. */
  | { type: 'steered'; message: { id: string; content: string } }
  | { type: 'done'; result: RunResult };
