import { InvalidArgumentError } from '../../../errors';
import { ATTR } from '../../../telemetry/conventions';
import type { Telemetry } from '../../../telemetry/telemetry';
import type { Clock } from '../../../timing/clock';
import { isTimeLimit, within } from '../../../timing/within';
import type { RunStop } from '../types';
import type {
  GuardrailCheck,
  GuardrailContext,
  GuardrailFunction,
  GuardrailOptions,
  GuardrailRecord,
  GuardrailStage,
  GuardrailSubject,
  GuardrailVerdict,
  HoldBack,
  InputSubject,
  OutputSubject,
  ToolInputSubject,
  ToolOutputSubject,
} from './types';

/** One guardrail, named, called as a function. */
export interface NamedGuardrail<S extends GuardrailSubject> {
  readonly name: string;
  readonly check: GuardrailFunction<S>;
}

/** The runner's guardrails, checked once when it is built. */
export interface Guardrails {
  readonly input: ReadonlyArray<NamedGuardrail<InputSubject>>;
  readonly output: ReadonlyArray<NamedGuardrail<OutputSubject>>;
  readonly toolInput: ReadonlyArray<NamedGuardrail<ToolInputSubject>>;
  readonly toolOutput: ReadonlyArray<NamedGuardrail<ToolOutputSubject>>;
  readonly holdBack: HoldBack;
  readonly parallelInput: boolean;
  readonly maxFeedback: number;
  /** How long one guardrail may take, in milliseconds on the runner's clock. */
  readonly timeoutMs: number;
}

/** What the guardrails of one stage say together: the first block, else the feedback of all that gave one, else allow. */
export type Judgement =
  | { readonly action: 'allow' }
  | { readonly action: 'block' | 'feedback'; readonly message: string; readonly guardrail: string; readonly stage: GuardrailStage };

/** Where a check's records and span events go: the run's. */
export interface JudgedIn {
  readonly context: GuardrailContext;
  readonly records: GuardrailRecord[];
  readonly telemetry: Telemetry;
  /** Times each guardrail's verdict, against `timeoutMs`. */
  readonly clock: Clock;
  readonly timeoutMs?: number;
  /** Set at the tool stages. */
  readonly callId?: string;
  /** A passing check of a segment is recorded once a turn. */
  readonly once?: boolean;
}

const DEFAULT_MAX_FEEDBACK = 3;
const DEFAULT_TIMEOUT_MS = 30_000;
const STAGES = ['input', 'output', 'toolInput', 'toolOutput'] as const;

/** The runner's `guardrails` option checked and named; undefined when it sets none. */
export function guardrailsOf(options: GuardrailOptions | undefined): Guardrails | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('guardrails must be an object');
  for (const stage of STAGES) {
    const list = options[stage];
    if (list !== undefined && !Array.isArray(list)) throw new InvalidArgumentError(`guardrails.${stage} must be an array`);
  }
  const holdBack = options.holdBack ?? 'turn';
  if (!['turn', 'segments', 'none'].includes(holdBack))
    throw new InvalidArgumentError(`guardrails.holdBack must be 'turn', 'segments' or 'none', got ${JSON.stringify(holdBack)}`);
  const maxFeedback = options.maxFeedback ?? DEFAULT_MAX_FEEDBACK;
  if (!Number.isInteger(maxFeedback) || maxFeedback < 0)
    throw new InvalidArgumentError(`guardrails.maxFeedback must be an integer >= 0, got ${String(options.maxFeedback)}`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!isTimeLimit(timeoutMs))
    throw new InvalidArgumentError(`guardrails.timeoutMs must be a positive number of milliseconds, got ${String(options.timeoutMs)}`);
  const guardrails: Guardrails = {
    input: named(options.input, 'input'),
    output: named(options.output, 'output'),
    toolInput: named(options.toolInput, 'toolInput'),
    toolOutput: named(options.toolOutput, 'toolOutput'),
    holdBack,
    parallelInput: options.parallelInput === true,
    maxFeedback,
    timeoutMs,
  };
  const none = STAGES.every((stage) => guardrails[stage].length === 0);
  return none ? undefined : guardrails;
}

function named<S extends GuardrailSubject>(list: ReadonlyArray<GuardrailCheck<S>> | undefined, stage: string): NamedGuardrail<S>[] {
  return (list ?? []).map((entry, i) => {
    if (typeof entry === 'function') return { name: entry.name || `${stage}-${i + 1}`, check: entry };
    if (typeof entry !== 'object' || entry === null || typeof entry.check !== 'function')
      throw new InvalidArgumentError(`guardrails.${stage}[${i}] must be a function or an object with a check() method`);
    const name = typeof entry.name === 'string' && entry.name !== '' ? entry.name : (className(entry) ?? `${stage}-${i + 1}`);
    return { name, check: (subject: S, context: GuardrailContext) => entry.check(subject, context) };
  });
}

function className(value: object): string | undefined {
  const name = (value.constructor as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? name : undefined;
}

/**
 * Runs a stage's guardrails on one subject, side by side, and says what they decided. A
 * guardrail that throws, returns no verdict or gives none within `timeoutMs` blocks: a check
 * that could not be made never lets anything through.
 */
export async function judge<S extends GuardrailSubject>(
  guardrails: ReadonlyArray<NamedGuardrail<S>>,
  subject: S,
  where: JudgedIn,
): Promise<Judgement> {
  const verdicts = await Promise.all(guardrails.map((guardrail) => verdictOf(guardrail, subject, where)));
  let feedback: Judgement | undefined;
  let blocked: Judgement | undefined;
  verdicts.forEach((verdict, i) => {
    const guardrail = (guardrails[i] as NamedGuardrail<S>).name;
    record(where, guardrail, subject.stage, verdict);
    if (verdict.action === 'block') blocked ??= { action: 'block', message: verdict.message, guardrail, stage: subject.stage };
    else if (verdict.action === 'feedback')
      feedback =
        feedback === undefined || feedback.action === 'allow'
          ? { action: 'feedback', message: verdict.message, guardrail, stage: subject.stage }
          : { ...feedback, message: `${feedback.message}\n${verdict.message}` };
  });
  return blocked ?? feedback ?? ALLOW;
}

const ALLOW: Judgement = { action: 'allow' };

async function verdictOf<S extends GuardrailSubject>(guardrail: NamedGuardrail<S>, subject: S, where: JudgedIn): Promise<GuardrailVerdict> {
  let verdict: unknown;
  try {
    const given = await within(
      Promise.resolve().then(() => guardrail.check(subject, where.context)),
      where.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      where.clock,
    );
    if ('timedOut' in given)
      return { action: 'block', message: `the guardrail ${guardrail.name} timed out after ${where.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms` };
    verdict = given.value;
  } catch {
    // Its error is not shown: it may quote what it was checking.
    return { action: 'block', message: `the guardrail ${guardrail.name} failed` };
  }
  if (isVerdict(verdict)) return verdict;
  return { action: 'block', message: `the guardrail ${guardrail.name} returned no verdict` };
}

function isVerdict(value: unknown): value is GuardrailVerdict {
  if (typeof value !== 'object' || value === null) return false;
  const verdict = value as { action?: unknown; message?: unknown };
  if (verdict.action === 'allow') return true;
  return (verdict.action === 'block' || verdict.action === 'feedback') && typeof verdict.message === 'string';
}

function record(where: JudgedIn, guardrail: string, stage: GuardrailStage, verdict: GuardrailVerdict): void {
  const turn = where.context.turn;
  const entry: GuardrailRecord = { guardrail, stage, action: verdict.action, turn };
  if (verdict.action !== 'allow') entry.message = verdict.message;
  if (where.callId !== undefined) entry.callId = where.callId;
  const seen =
    where.once &&
    verdict.action === 'allow' &&
    where.records.some((r) => r.guardrail === guardrail && r.stage === stage && r.turn === turn && r.action === 'allow');
  if (!seen) where.records.push(entry);
  // An event of the span active now (the run's, or the tool's), when a tracer records.
  const span = where.telemetry.active()?.api.trace.getActiveSpan();
  span?.addEvent('guardrail', {
    [ATTR.guardrailName]: guardrail,
    [ATTR.guardrailStage]: stage,
    [ATTR.guardrailAction]: verdict.action,
  });
}

/** The stop a block makes (`path`: the sub-agents it happened in, outermost first). */
export function blockedStop(judgement: Judgement & { action: 'block' | 'feedback' }, path?: string[]): RunStop {
  const stop: RunStop = { status: 'blocked', guardrail: judgement.guardrail, stage: judgement.stage, message: judgement.message };
  if (path && path.length > 0) stop.path = path;
  return stop;
}
