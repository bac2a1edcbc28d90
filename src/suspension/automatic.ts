import type { PendingRequest } from '../results/wire';
import type { ToolContext } from '../toolkit/context';
import type { Principal } from './audit';

/** What automatic answers decide of an approval: approve it, deny it, ask a person, or leave it to others (a person). */
export type AutomaticDecision = 'approved' | 'denied' | 'ask' | 'not-applicable';

/** The approval request automatic answers are asked about. */
export interface AutomaticQuestion {
  tool: string;
  /** The arguments as the tool parsed them. */
  args: unknown;
  request: PendingRequest;
  /** On whose behalf the call was made, when recorded. */
  requestedBy?: Principal;
}

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
}

/** What automatic answers decided of a call, kept with it. */
export interface AutomaticRecord {
  policy: string;
  decision: AutomaticDecision;
  /** True when it was only recorded (shadow mode). */
  shadow: boolean;
}

const DECISIONS: readonly AutomaticDecision[] = ['approved', 'denied', 'ask', 'not-applicable'];

/** The decision, or `ask` when the rule threw or answered something else. */
export async function automaticDecision(
  automatic: AutomaticAnswers,
  question: AutomaticQuestion,
  ctx: ToolContext | undefined,
): Promise<AutomaticDecision> {
  try {
    const decision = await automatic.decide(question, ctx);
    return DECISIONS.includes(decision) ? decision : 'ask';
  } catch {
    return 'ask';
  }
}
