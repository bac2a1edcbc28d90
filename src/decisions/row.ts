import type { ChatMessage } from '../models/types';
import type { Signature } from '../results/wire';
import type { Principal } from '../suspension/audit';
import type { AutomaticDecision } from '../suspension/automatic';
import { escalationOf } from '../suspension/escalation';
import { approvalLabelOf } from '../suspension/evaluation';
import type { Redactor } from '../suspension/redact';
import { GRANT_COMMENT } from '../suspension/standing';
import type { SettledStatus, SuspendedCall } from '../suspension/store';

/** The `format` of every {@link DecisionRow}: the published JSON Schema's version (`schemas/decision.schema.json`). */
export const DECISION_ROW_FORMAT = 'toolnexus.decision/1';

/**
 * What was decided of a request: `approved`, `edited` (approved with other arguments),
 * `declined`, `expired`, `cancelled`; `answered` for a request that is no approval (an input,
 * a question, a login) answered and run.
 */
export type DecisionLabel = 'approved' | 'edited' | 'declined' | 'expired' | 'cancelled' | 'answered';

/**
 * Who settled it: a `person` (the principal recorded), an `automatic` answer acting on its
 * rule, a standing `grant`, or `none` (an expiry, a settlement the library made itself).
 */
export type DecisionSource = 'person' | 'automatic' | 'grant' | 'none';

/** The transcript that led to the call: the run's messages up to the model's turn that made it, redacted and bounded. */
export interface DecisionContext {
  messages: ChatMessage[];
  /** True when earlier messages (or the end of a long one) were left out to keep within the bound. */
  truncated: boolean;
}

/**
 * One settled request as evaluation data (docs/operating.md, "Decisions as evaluation data"),
 * the row `exportDecisions` yields in its own format; `schemas/decision.schema.json` (the
 * package's `toolnexus-ts/decisions/schema.json`) is its JSON Schema. Every value a person
 * must not see is redacted as everywhere else (`redactCall`).
 */
export interface DecisionRow {
  format: typeof DECISION_ROW_FORMAT;
  /** The request's id. */
  id: string;
  kind: string;
  tool: string;
  runId?: string;
  callId?: string;
  session?: string;
  /** The call as the model made it (arguments redacted) and the request it raised. */
  call: { args: unknown; prompt: string; data?: Record<string, unknown> };
  /** Absent when the call has no run, the run's checkpoint is gone, or context was not asked for. */
  context?: DecisionContext;
  decision: {
    label: DecisionLabel;
    status: SettledStatus;
    source: DecisionSource;
    by?: Principal;
    /** The answerer's words, redacted. */
    comment?: string;
    /** With `edited`: the arguments the approver ran instead of `call.args`, redacted the same way. */
    editedArgs?: unknown;
    /** Present when the request had escalated before it was answered: when, and to whom. */
    escalated?: { at: string; to: string[] };
    /** What an automatic answer rule decided of it (acted on, or shadowed beside the person's answer). */
    automatic?: {
      policy: string;
      decision: AutomaticDecision;
      shadow: boolean;
      timedOut?: true;
      /**
       * In shadow mode, whether the person's answer matched the rule's: `approved` with
       * approved or edited, `denied` with declined. Absent when the rule did not decide
       * (`ask`, `not-applicable`) or nobody answered (expired, cancelled).
       */
      agreed?: boolean;
    };
  };
  /** A quorum's approvals and declines, oldest first (comments redacted). */
  signatures: Signature[];
  /** What the call produced once settled (its output redacted). */
  outcome?: { output: string; isError: boolean };
  timings: {
    requestedAt: string;
    answeredAt?: string;
    settledAt: string;
    /** From the request to the answer that claimed it, in milliseconds. */
    waitMs?: number;
    /** From that answer to the settlement (the replay), in milliseconds. */
    settleMs?: number;
  };
}

/** The label of a settled call. */
export function labelOf(call: SuspendedCall): DecisionLabel {
  const status = call.status as SettledStatus;
  return approvalLabelOf(call, status) ?? (status === 'resolved' ? 'answered' : status);
}

function sourceOf(call: SuspendedCall): DecisionSource {
  const { automatic, answeredBy } = call;
  if (answeredBy === undefined) return 'none';
  if (automatic && !automatic.shadow && answeredBy.id === `policy:${automatic.policy}`) return 'automatic';
  if (call.comment?.startsWith(GRANT_COMMENT) === true) return 'grant';
  return 'person';
}

/** Whether a shadowed rule's decision matched the label a person gave; undefined where either said nothing. */
export function agreementOf(decision: AutomaticDecision, label: DecisionLabel): boolean | undefined {
  if (decision !== 'approved' && decision !== 'denied') return undefined;
  if (label !== 'approved' && label !== 'edited' && label !== 'declined') return undefined;
  return decision === 'approved' ? label !== 'declined' : label === 'declined';
}

const elapsed = (from: string | undefined, to: string | undefined): number | undefined => {
  const ms = from === undefined || to === undefined ? Number.NaN : Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) ? Math.max(0, ms) : undefined;
};

/** The row of a settled call, everything shown redacted by `redactor` (the one path: `redactCall`'s). */
export function decisionRowOf(call: SuspendedCall, redactor: Redactor, context: DecisionContext | undefined): DecisionRow {
  const shown = redactor.call(call);
  const { redact } = redactor.forCall(call);
  const label = labelOf(call);
  const settledAt = call.updatedAt ?? call.answeredAt ?? call.createdAt;
  const escalation = escalationOf(call.request);
  const answeredAt = call.answeredAt ?? settledAt;
  const decision: DecisionRow['decision'] = { label, status: call.status as SettledStatus, source: sourceOf(call) };
  if (call.answeredBy !== undefined) decision.by = { ...call.answeredBy };
  if (shown.comment !== undefined) decision.comment = shown.comment;
  if (label === 'edited') decision.editedArgs = shown.answer?.args;
  if (escalation !== undefined && escalation.at <= Date.parse(answeredAt))
    decision.escalated = { at: new Date(escalation.at).toISOString(), to: [...escalation.to] };
  if (call.automatic !== undefined) {
    const { policy, decision: ruled, shadow, timedOut } = call.automatic;
    const agreed = shadow ? agreementOf(ruled, label) : undefined;
    decision.automatic = {
      policy,
      decision: ruled,
      shadow,
      ...(timedOut ? { timedOut } : {}),
      ...(agreed === undefined ? {} : { agreed }),
    };
  }
  const row: DecisionRow = {
    format: DECISION_ROW_FORMAT,
    id: call.request.id,
    kind: call.request.kind,
    tool: call.tool,
    call: {
      args: shown.args ?? null,
      prompt: shown.request.prompt,
      ...(shown.request.data === undefined ? {} : { data: shown.request.data }),
    },
    decision,
    signatures: (call.signatures ?? []).map((signature) => ({
      ...signature,
      by: { ...signature.by },
      ...(signature.comment === undefined ? {} : { comment: redact(signature.comment) }),
    })),
    timings: {
      requestedAt: call.createdAt,
      ...(call.answeredAt === undefined ? {} : { answeredAt: call.answeredAt }),
      settledAt,
    },
  };
  const waitMs = elapsed(call.createdAt, call.answeredAt);
  const settleMs = elapsed(call.answeredAt, call.updatedAt);
  if (waitMs !== undefined) row.timings.waitMs = waitMs;
  if (settleMs !== undefined) row.timings.settleMs = settleMs;
  if (call.runId !== undefined) row.runId = call.runId;
  if (call.callId !== undefined) row.callId = call.callId;
  if (call.session !== undefined) row.session = call.session;
  if (context !== undefined) row.context = { messages: context.messages.map((message) => redact(message)), truncated: context.truncated };
  if (shown.outcome !== undefined) row.outcome = { output: shown.outcome.output, isError: shown.outcome.isError };
  return row;
}
