import type { PendingRequest } from '../results/wire';
import type { ToolContext } from '../toolkit/context';
import type { Clock } from '../timing/clock';
import { isTimeLimit, within } from '../timing/within';
import { InvalidArgumentError } from '../errors';
import type { Principal } from './audit';

/** What automatic answers decide of an approval: approve it, deny it, ask a person, or leave it to others (a person). */
export type AutomaticDecision = 'approved' | 'denied' | 'ask' | 'not-applicable';

/**
 * The approval request automatic answers are asked about: that of the **asking call**
 * (docs/design.md), so a request a sub-agent surfaced is asked about by the tool that raised
 * it (`refund`), never by the sub-agent tool's name (`research`).
 */
export interface AutomaticQuestion {
  /** The tool that asked. */
  tool: string;
  /** The arguments as the tool parsed them. */
  args: unknown;
  request: PendingRequest;
  /** On whose behalf the call was made, when recorded. */
  requestedBy?: Principal;
  /** The sub-agent tools from the surfaced call down to the one that asked (empty when it asked itself). */
  path: readonly string[];
}

/** How long `decide` may take before the request is left to a person, by default: 10 seconds. */
export const DEFAULT_AUTOMATIC_TIMEOUT_MS = 10_000;

/**
 * Answers approval requests by rule before a person is asked (docs/who-may-answer.md,
 * "Automatic answers"): `approved` and `denied` settle the request at once, audited with
 * `policy:<name>` as the principal; `ask` and `not-applicable` leave it to a person. With
 * `shadow`, nothing is settled: each decision is recorded on the call (`automatic`) beside what
 * the person then decides, to roll a rule out. A decision that throws is `ask`.
 */
export interface AutomaticAnswers {
  /** Recorded as the principal `policy:<name>` of what it settles. */
  name: string;
  decide(question: AutomaticQuestion, ctx: ToolContext | undefined): AutomaticDecision | Promise<AutomaticDecision>;
  /** Record the decisions, act on none. Default false. */
  shadow?: boolean;
  /**
   * How long `decide` may take, in milliseconds on the coordinator's clock; past it the request
   * is left to a person (`ask`, recorded with `timedOut: true`). Default 10 000.
   */
  timeoutMs?: number;
}

/** What automatic answers decided of a call, kept with it. */
export interface AutomaticRecord {
  policy: string;
  decision: AutomaticDecision;
  /** True when it was only recorded (shadow mode). */
  shadow: boolean;
  /** True when `decide` did not settle within `timeoutMs`: the decision is `ask`, and a person is asked. */
  timedOut?: true;
}

/**
 * Refuses malformed automatic answers when the coordinator is built.
 * @throws {@link InvalidArgumentError} no `name` or `decide`, or a `timeoutMs` that is no positive number.
 */
export function checkAutomaticAnswers(automatic: AutomaticAnswers): void {
  if (typeof automatic?.decide !== 'function' || typeof automatic.name !== 'string' || automatic.name === '')
    throw new InvalidArgumentError('automaticAnswers needs { name, decide(question, ctx), shadow?, timeoutMs? }');
  if (automatic.timeoutMs !== undefined && !isTimeLimit(automatic.timeoutMs))
    throw new InvalidArgumentError(
      `automaticAnswers.timeoutMs must be a positive number of milliseconds, got ${String(automatic.timeoutMs)}`,
    );
}

const DECISIONS: readonly AutomaticDecision[] = ['approved', 'denied', 'ask', 'not-applicable'];

/** The decision, or `ask` when the rule threw, answered something else, or did not settle within its time limit. */
export async function automaticDecision(
  automatic: AutomaticAnswers,
  question: AutomaticQuestion,
  ctx: ToolContext | undefined,
  clock: Clock,
): Promise<{ decision: AutomaticDecision; timedOut?: true }> {
  try {
    const decided = await within(
      Promise.resolve().then(() => automatic.decide(question, ctx)),
      automatic.timeoutMs ?? DEFAULT_AUTOMATIC_TIMEOUT_MS,
      clock,
    );
    if ('timedOut' in decided) return { decision: 'ask', timedOut: true };
    return { decision: DECISIONS.includes(decided.value) ? decided.value : 'ask' };
  } catch {
    return { decision: 'ask' };
  }
}
