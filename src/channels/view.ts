import type { SuspendedCall } from '../suspension/store';
import { approvalsOf, declinesOf, quorumOf } from '../suspension/quorum';
import { escalationOf } from '../suspension/escalation';
import { briefOf, type CallBrief } from '../inbox/brief';

/** Where an approval card's call stands, as the card shows it. */
export type CardState = 'pending' | 'approved' | 'declined' | 'expired' | 'cancelled';

/**
 * What an approval card shows, read from a **redacted** call (docs/channels.md, "The card"):
 * nothing here is taken from a call that was not redacted first, so no `@Sensitive` value
 * reaches a platform.
 */
export interface CardView extends CallBrief {
  callId: string;
  /** A quorum's progress and who may sign: `1 of 2 (finance)`. */
  quorum?: string;
  /** True when the card offers Edit: a pending approval that allows edited arguments and needs no quorum. */
  editable?: boolean;
  /** While it waits and its escalation is due: the principals it escalated to, who may answer it now. */
  escalatedTo?: string;
  state: CardState;
  /** Who approved (a quorum's signers, or the one approver) or declined, by name or id. */
  by: string[];
  /** A refusal's words (a decline's comment, a cancel's reason). */
  reason?: string;
}

/** The longest list of escalation principals a card shows. */
const MAX_ESCALATED_SHOWN = 300;

/** The card's view of `call` (redacted by the caller). A pending call past its deadline shows `expired`. */
export function cardViewOf(call: SuspendedCall, now: number): CardView {
  const view: CardView = { callId: call.request.id, ...briefOf(call), state: stateOf(call, now), by: [] };
  // A request a sub-agent surfaced carries no `editable` (src/runner/core/child-run.ts): no Edit for it here either.
  if (view.state === 'pending' && call.request.data?.editable === true && !quorumOf(call.request)) view.editable = true;
  const escalation = escalationOf(call.request);
  if (escalation && escalation.at <= now && view.state === 'pending') {
    const to = escalation.to.join(', ');
    view.escalatedTo = to.length > MAX_ESCALATED_SHOWN ? `${to.slice(0, MAX_ESCALATED_SHOWN)}…` : to;
  }
  const quorum = quorumOf(call.request);
  const names = (list: { by: { id: string; name?: string } }[]): string[] => list.map((s) => s.by.name ?? s.by.id);
  if (quorum) {
    const approvals = approvalsOf(call.signatures);
    view.quorum = `${view.quorum ?? ''}${groupOf(quorum.from)}`;
    view.by = view.state === 'declined' ? names(declinesOf(call.signatures)) : names(approvals);
  }
  if (
    call.answeredBy &&
    (view.state === 'approved' || view.state === 'declined') &&
    !view.by.includes(call.answeredBy.name ?? call.answeredBy.id)
  ) {
    view.by.push(call.answeredBy.name ?? call.answeredBy.id);
  }
  if (call.comment !== undefined && view.state !== 'approved' && view.state !== 'pending') view.reason = call.comment;
  return view;
}

/** The key of what a card shows: a card whose key did not change is not edited again. */
export function shownKey(view: CardView): string {
  const key = [view.state, view.quorum ?? '', view.by, view.reason ?? ''];
  // An escalation coming due edits the cards too (and keeps the keys of the others as they were).
  return JSON.stringify(view.escalatedTo === undefined ? key : [...key, view.escalatedTo]);
}

/** Whether the card shows a settled call: nothing on it changes any more. */
export function isFinal(view: CardView): boolean {
  return view.state !== 'pending';
}

function stateOf(call: SuspendedCall, now: number): CardState {
  switch (call.status) {
    case 'resolved':
      return 'approved';
    case 'declined':
    case 'expired':
    case 'cancelled':
      return call.status;
    default:
      return call.request.expiresAt !== undefined && Date.parse(call.request.expiresAt) <= now ? 'expired' : 'pending';
  }
}

/** ` (finance)` when every principal a quorum names is `finance:…`; nothing otherwise. */
function groupOf(from: readonly string[] | undefined): string {
  const groups = new Set((from ?? []).map((id) => (id.includes(':') ? id.slice(0, id.indexOf(':')) : '')));
  const [group] = [...groups];
  return groups.size === 1 && group ? ` (${group})` : '';
}
