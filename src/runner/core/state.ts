import { isMedia, isToolContent } from '../../results/content';
import { RunCheckpointError } from '../../errors';
import { isToolResult } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import type { RefusalStatus } from '../../suspension/answers';
import type { Principal } from '../../suspension/audit';
import { callStatus } from './call-status';
import type { OutputState } from './output';
import { stageOf, type GuardrailRecord, type GuardrailStage } from './guardrails/types';
import type { Budget, SessionBudget, Spend } from './budget';
import { fits, isObject, listOf, type MemberChecks } from '../../sessions/checks';
import { isSpending } from '../../sessions/validate';
import type { RunStop, ToolCallRecord } from './types';
import type { ChatMessage, ProviderItem, ToolCall, Usage } from '../../models/types';

/** Tags every checkpoint this runner writes, so a foreign or future state is refused, not misread. */
export const RUN_STATE_FORMAT = 'toolnexus.run/1';

/**
 * `halted`: some calls of the last turn are suspended. `running`: the last answer came in
 * and one process (the one that merged it) is continuing the loop. `failed`: that loop
 * stopped on a model error; `recover` continues it. `done` / `incomplete` and the stops
 * (`blocked`, `budget_exceeded`, `cancelled`, with {@link RunState.stop}): over.
 */
export type RunPhase = 'halted' | 'running' | 'failed' | 'done' | 'incomplete' | RunStop['status'];

/** The phases no resume or recover continues. */
export const ENDED_PHASES: readonly RunPhase[] = ['done', 'incomplete', 'blocked', 'budget_exceeded', 'cancelled'];

/** Whether a run in this phase is over. */
export function isEnded(phase: RunPhase): boolean {
  return ENDED_PHASES.includes(phase);
}

/** One call of the halted turn. `pendingId` is set while it is suspended; `result` is its pending result until then. */
export interface HaltedCall {
  call: ToolCall;
  result: ToolResult;
  pendingId?: string;
  /** How the answer refused it, once it was answered so (its result alone does not say). */
  refusal?: RefusalStatus;
}

/** What a run checkpoint's `state` holds (JSON all the way down). */
export interface RunState {
  format: typeof RUN_STATE_FORMAT;
  phase: RunPhase;
  /** The transcript; while halted it ends with the assistant turn whose calls are listed in `halted`. */
  messages: ChatMessage[];
  /** Calls of earlier turns, with their results. */
  toolCalls: ToolCallRecord[];
  turns: number;
  usage: Usage;
  /** Each model call's counts, in turn order (absent in checkpoints written before it was kept). */
  turnUsage?: Usage[];
  text: string;
  /** The typed answer the run asks for: its DTO's name, repair rounds used, and the answer once validated. */
  output?: OutputState;
  halted?: { turn: number; calls: HaltedCall[] };
  /**
   * With durable steps (`durability: 'step'`), while `running`: the turn whose calls are
   * being run, each with its result once it is in, and `started` once a call that is not
   * idempotent began. The transcript then ends with that turn's assistant message.
   */
  step?: RunStep;
  /** The agent holding the conversation after a handoff (absent: the runner that started the run). */
  agent?: string;
  /** Why the loop stopped, when `failed`. */
  error?: string;
  /** Why the run was stopped on purpose, in the phases `blocked`, `budget_exceeded` and `cancelled`. */
  stop?: RunStop;
  /** The run's budget, when it has one (a resume in any process keeps to it). */
  budget?: Budget;
  /** Its session's budget and what the session spent before the run, when the runner has a `sessionBudget`. */
  sessionBudget?: SessionBudget;
  /** What it spent besides tokens (cost, tool calls, wall time driving it), when counted. */
  spend?: Spend;
  /** The guardrails' checks and the feedback rounds they took, once one was made. */
  guardrails?: { records: GuardrailRecord[]; feedbacks: number };
  /**
   * While `running`: the process driving the loop, and when it last said so. It renews this
   * every third of the runner's `runLeaseMs`; a run not renewed for a whole lease has lost
   * its driver, and `recover` or a repeated `resume` takes it over.
   */
  driver?: RunDriver;
  /**
   * The W3C `traceparent` of the `invoke_agent` span that last halted the run, when a tracer
   * recorded it: the resume's span links to it, in whichever process resumes.
   */
  traceparent?: string;
  /** On whose behalf the run was started (`RunOptions.principal`). */
  principal?: Principal;
  /** The session the run belongs to (`RunOptions.session`, a chat's): its spans' `gen_ai.conversation.id` in every process. */
  session?: string;
  /** Messages steered into the run that no turn took yet (`AgentRunner.steer`): the next turn, in any process, takes them. */
  steering?: SteerMessage[];
}

/** A message steered into a run (docs/agents.md, "Steering"): queued until the run's next turn takes it. */
export interface SteerMessage {
  /** Its id: the transcript's user message keeps it, and a steer sent again with it is queued once. */
  id: string;
  /** The user's text. */
  content: string;
}

/** The calls of the turn in progress under durable steps (see {@link RunState.step}). */
export interface RunStep {
  turn: number;
  calls: StepCall[];
}

/** One call of the turn in progress: its result once recorded; `started` once it began (tools that are not idempotent). */
export interface StepCall {
  call: ToolCall;
  result?: ToolResult;
  started?: boolean;
  /** The run's stop, when a feature refused to run the call and that ends the run (its `result` says so). */
  stop?: RunStop;
}

/** Who drives a `running` run, and when it last renewed its lease (RFC 3339, the driver's clock). */
export interface RunDriver {
  id: string;
  renewedAt: string;
}

const PHASES: readonly string[] = ['halted', 'running', 'failed', 'done', 'incomplete', 'blocked', 'budget_exceeded', 'cancelled'];
const REFUSALS: readonly string[] = ['declined', 'expired', 'cancelled'];
const STOPS: readonly string[] = ['blocked', 'budget_exceeded', 'cancelled'];

const isString = (value: unknown): boolean => typeof value === 'string';
const isNumber = (value: unknown): boolean => typeof value === 'number';

/** The checks of the objects a state holds. */
const USAGE: MemberChecks<Usage> = { inputTokens: isNumber, outputTokens: isNumber };
const STEER: MemberChecks<SteerMessage> = { id: isString, content: isString };
const GUARDRAIL_RECORD: MemberChecks<GuardrailRecord> = { guardrail: isString, stage: isString, action: isString, turn: Number.isInteger };
const OUTPUT: MemberChecks<OutputState> = { name: isString, repairs: Number.isInteger, maxRepairs: Number.isInteger };
const HALTED: MemberChecks<NonNullable<RunState['halted']>> = {
  turn: Number.isInteger,
  calls: (calls) => Array.isArray(calls) && calls.every(isHaltedCall),
};
const SPEND: MemberChecks<Spend> = { costUsd: isNumber, toolCalls: Number.isInteger, wallMs: isNumber };
const SESSION_BUDGET: MemberChecks<SessionBudget> = { budget: isObject, before: isSpending };
const GUARDRAILS: MemberChecks<NonNullable<RunState['guardrails']>> = {
  records: (records) => listOf(records, GUARDRAIL_RECORD),
  feedbacks: Number.isInteger,
};
const STEP: MemberChecks<RunStep> = { turn: Number.isInteger, calls: (calls) => Array.isArray(calls) && calls.every(isStepCall) };
// A renewal time is anything Date.parse reads.
const DRIVER: MemberChecks<RunDriver> = { id: isString, renewedAt: (at) => !Number.isNaN(Date.parse(at as string)) };

/** Checks a stored state before anything trusts it. */
export function readRunState(runId: string, raw: unknown): RunState {
  const fail = (detail: string): never => {
    throw new RunCheckpointError(runId, detail);
  };
  if (typeof raw !== 'object' || raw === null) fail('the state is not an object');
  const state = raw as Partial<RunState>;
  if (state.format !== RUN_STATE_FORMAT) fail(`unknown state format ${JSON.stringify(state.format)} (expected ${RUN_STATE_FORMAT})`);
  if (typeof state.phase !== 'string' || !PHASES.includes(state.phase)) fail(`unknown phase ${JSON.stringify(state.phase)}`);
  if (!Array.isArray(state.messages) || !state.messages.every(isMessage)) fail('messages is not a transcript');
  if (!Array.isArray(state.toolCalls) || !state.toolCalls.every(isRecord)) fail('toolCalls is not a list of tool calls');
  // Checkpoints written before records had a status: read from the result (a refusal then reads as `error`).
  for (const record of state.toolCalls as ToolCallRecord[]) record.status ??= callStatus(record.result);
  // Checkpoints written before issue 45 named the tool stages `tool_input` / `tool_output`: read as today's names.
  if (state.stop?.status === 'blocked') state.stop.stage = stageOf(state.stop.stage) as GuardrailStage;
  for (const record of state.guardrails?.records ?? []) record.stage = stageOf(record.stage) as GuardrailStage;
  if (!Number.isInteger(state.turns) || (state.turns as number) < 0) fail('turns is not a count');
  if (!fits(state.usage, USAGE)) fail('usage is malformed');
  if (state.turnUsage !== undefined && !listOf(state.turnUsage, USAGE)) fail('turnUsage is malformed');
  if (state.output !== undefined && !fits(state.output, OUTPUT)) fail('output is malformed');
  if (typeof state.text !== 'string') fail('text is not a string');
  if (state.halted !== undefined && !fits(state.halted, HALTED)) fail('the halted turn is malformed');
  if (state.phase === 'halted' && state.halted === undefined) fail('a halted run has no halted turn');
  const stop = state.stop;
  if (stop !== undefined && (typeof stop !== 'object' || stop === null || stop.status !== state.phase))
    fail('the stop does not match the phase');
  if (stop === undefined && (state.phase === 'blocked' || state.phase === 'budget_exceeded' || state.phase === 'cancelled'))
    fail(`a ${state.phase} run does not say why`);
  if (state.agent !== undefined && typeof state.agent !== 'string') fail('agent is not a name');
  if (state.spend !== undefined && !fits(state.spend, SPEND)) fail('spend is malformed');
  if (state.budget !== undefined && !isObject(state.budget)) fail('budget is malformed');
  if (state.sessionBudget !== undefined && !fits(state.sessionBudget, SESSION_BUDGET)) fail('sessionBudget is malformed');
  if (state.guardrails !== undefined && !fits(state.guardrails, GUARDRAILS)) fail('the guardrail records are malformed');
  if (state.step !== undefined && !fits(state.step, STEP)) fail('the step in progress is malformed');
  if (state.steering !== undefined && !listOf(state.steering, STEER)) fail('the steered messages are malformed');
  if (state.driver !== undefined && !fits(state.driver, DRIVER)) fail('the driver is malformed');
  return state as RunState;
}

function isToolCall(value: unknown): value is ToolCall {
  const call = value as ToolCall;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof call.id === 'string' &&
    typeof call.name === 'string' &&
    typeof call.arguments === 'string'
  );
}

function isMessage(value: unknown): value is ChatMessage {
  if (typeof value !== 'object' || value === null) return false;
  const message = value as ChatMessage;
  switch (message.role) {
    case 'user':
      return typeof message.content === 'string' && (message.id === undefined || typeof message.id === 'string');
    case 'assistant':
      return (
        typeof message.content === 'string' &&
        (message.toolCalls === undefined || (Array.isArray(message.toolCalls) && message.toolCalls.every(isToolCall))) &&
        (message.items === undefined || (Array.isArray(message.items) && message.items.every(isProviderItem)))
      );
    case 'tool':
      return (
        typeof message.callId === 'string' &&
        typeof message.name === 'string' &&
        typeof message.content === 'string' &&
        typeof message.isError === 'boolean' &&
        (message.media === undefined || (Array.isArray(message.media) && message.media.every(isMediaPart)))
      );
    default:
      return false;
  }
}

/** A media part as the transcript keeps it: content that is media (image, audio, file) with one source. */
function isMediaPart(value: unknown): boolean {
  return isToolContent(value) && isMedia(value);
}

function isProviderItem(value: unknown): value is ProviderItem {
  if (typeof value !== 'object' || value === null) return false;
  const item = value as ProviderItem;
  return (
    typeof item.provider === 'string' &&
    typeof item.type === 'string' &&
    typeof item.data === 'object' &&
    item.data !== null &&
    !Array.isArray(item.data)
  );
}

function isRecord(value: unknown): value is ToolCallRecord {
  return isToolCall(value) && isToolResult((value as ToolCallRecord).result) && Number.isInteger((value as ToolCallRecord).turn);
}

function isHaltedCall(value: unknown): value is HaltedCall {
  if (typeof value !== 'object' || value === null) return false;
  const halted = value as HaltedCall;
  return (
    isToolCall(halted.call) &&
    isToolResult(halted.result) &&
    (halted.pendingId === undefined || typeof halted.pendingId === 'string') &&
    (halted.refusal === undefined || REFUSALS.includes(halted.refusal))
  );
}

function isStepCall(value: unknown): value is StepCall {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as StepCall;
  return (
    isToolCall(entry.call) &&
    (entry.result === undefined || isToolResult(entry.result)) &&
    (entry.started === undefined || typeof entry.started === 'boolean') &&
    (entry.stop === undefined || (typeof entry.stop === 'object' && entry.stop !== null && STOPS.includes(entry.stop.status)))
  );
}
