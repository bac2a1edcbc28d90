import { InvalidArgumentError } from '../errors';
import type { RunStore } from '../runner/core/store';
import type { AutomaticDecision } from '../suspension/automatic';
import type { SuspensionStore } from '../suspension/store';
import { exportDecisions, type ExportDecisionsOptions } from './export';

/** What the person did with a request a rule had shadowed: a column of the confusion table. */
export type PersonAnswer = 'approved' | 'edited' | 'declined' | 'expired' | 'cancelled';

/** Options of {@link policyReport}. */
export interface PolicyReportOptions extends Pick<ExportDecisionsOptions, 'since' | 'until' | 'tools' | 'pageSize'> {
  /** The `automaticAnswers` rule's `name`. */
  policy: string;
}

/**
 * How a shadow `automaticAnswers` rule compares with the people who answered the same requests
 * (docs/operating.md, "Decisions as evaluation data"): the confusion table of the rule's
 * decision against the person's answer, and the agreement where both decided.
 */
export interface PolicyReport {
  policy: string;
  /** `table[rule][person]`: how many requests the rule decided so and the person answered so. */
  table: Record<AutomaticDecision, Record<PersonAnswer, number>>;
  /** The shadowed requests counted. */
  total: number;
  /** The rule said `approved` and the person approved or edited, or it said `denied` and they declined. */
  agreed: number;
  /** The rule said `approved` or `denied` and the person answered the other way. */
  disagreed: number;
  /** `agreed / (agreed + disagreed)`, absent when there is neither. */
  agreement?: number;
}

const RULED: readonly AutomaticDecision[] = ['approved', 'denied', 'ask', 'not-applicable'];
const ANSWERS: readonly PersonAnswer[] = ['approved', 'edited', 'declined', 'expired', 'cancelled'];

/**
 * The agreement report of a shadow rule over the requests settled in `[since, until)`, read a
 * page at a time as {@link exportDecisions} reads them (no checkpoint is read).
 */
export async function policyReport(
  store: SuspensionStore & Partial<Pick<RunStore, 'loadRun'>>,
  options: PolicyReportOptions,
): Promise<PolicyReport> {
  if (typeof options?.policy !== 'string' || options.policy === '')
    throw new InvalidArgumentError('policyReport: policy must name an automaticAnswers rule');
  const { policy, ...window } = options;
  const table = Object.fromEntries(
    RULED.map((rule) => [rule, Object.fromEntries(ANSWERS.map((answer) => [answer, 0]))]),
  ) as PolicyReport['table'];
  const report: PolicyReport = { policy, table, total: 0, agreed: 0, disagreed: 0 };
  for await (const row of exportDecisions(store, { ...window, context: false })) {
    const automatic = row.decision.automatic;
    const label = row.decision.label;
    if (automatic?.policy !== policy || !automatic.shadow || !(ANSWERS as readonly string[]).includes(label)) continue;
    table[automatic.decision][label as PersonAnswer] += 1;
    report.total += 1;
    if (automatic.agreed === true) report.agreed += 1;
    if (automatic.agreed === false) report.disagreed += 1;
  }
  const decided = report.agreed + report.disagreed;
  if (decided > 0) report.agreement = report.agreed / decided;
  return report;
}
