import type { CardView } from './view';

/** The action ids of the card's buttons; each button's value is the call's id. */
export const APPROVE_ACTION = 'toolnexus.approve';
export const DECLINE_ACTION = 'toolnexus.decline';
/** The Edit button's action id, on an editable approval's card: it opens a modal of the arguments. */
export const EDIT_ACTION = 'toolnexus.edit';

/**
 * The platforms whose Chat SDK adapter opens a dialog for a card's button: Slack's modal
 * (`views.open` with the click's trigger id) and Teams' dialog (a task module, through the
 * `task/fetch` invoke of a button marked `actionType: 'modal'`). Google Chat's adapter opens
 * none, so a card there offers no Edit (docs/channels.md, "Edit").
 */
export const EDIT_PLATFORMS: ReadonlySet<string> = new Set(['slack', 'teams']);

/** A Chat SDK card element (`chat`'s `CardElement`), as this entry builds and passes it on. */
export type CardElement = { type: 'card' } & Record<string, unknown>;

/** The card builders of the `chat` package this entry uses (its card model, rendered by each adapter). */
export interface CardBuilders {
  Card(options: { title?: string; subtitle?: string; children?: unknown[] }): CardElement;
  CardText(content: string, options?: { style?: 'bold' | 'muted' }): unknown;
  Fields(children: unknown[]): unknown;
  Field(options: { label: string; value: string }): unknown;
  Actions(children: unknown[]): unknown;
  Button(options: { id: string; label: string; style?: 'primary' | 'danger'; value?: string; actionType?: 'action' | 'modal' }): unknown;
}

const OUTCOME: Record<Exclude<CardView['state'], 'pending'>, string> = {
  approved: 'Approved',
  declined: 'Declined',
  expired: 'Expired: nobody can answer it any more',
  cancelled: 'Cancelled',
};

/**
 * The approval card, built once with the Chat SDK's card model (each adapter renders it: Block
 * Kit, an Adaptive Card, a Card v2): the redacted call, the prompt, who asked, the quorum's
 * progress, the deadline, and Approve / Decline while it waits; the outcome once settled. An
 * escalation notice (`notice`) is the same card, titled and announced as escalated.
 */
export function approvalCard(chat: CardBuilders, view: CardView, notice = false): { card: CardElement; fallbackText: string } {
  const fields = [chat.Field({ label: 'Call', value: `${view.tool} ${view.args}` })];
  if (view.requestedBy !== undefined) fields.push(chat.Field({ label: 'Asked by', value: view.requestedBy }));
  if (view.quorum !== undefined) fields.push(chat.Field({ label: 'Approvals', value: view.quorum }));
  if (view.deadline !== undefined) fields.push(chat.Field({ label: 'Deadline', value: view.deadline }));
  if (view.escalatedTo !== undefined) fields.push(chat.Field({ label: 'Escalated to', value: view.escalatedTo }));
  const children: unknown[] = [chat.CardText(view.prompt), chat.Fields(fields)];
  let fallbackText = notice ? `Escalated to ${view.escalatedTo ?? 'you'}: ${view.prompt}` : `Approval needed: ${view.prompt}`;
  if (view.state === 'pending') {
    children.push(
      chat.Actions([
        chat.Button({ id: APPROVE_ACTION, label: 'Approve', style: 'primary', value: view.callId }),
        chat.Button({ id: DECLINE_ACTION, label: 'Decline', style: 'danger', value: view.callId }),
        // `modal`: Teams opens its dialog (task/fetch) for it; Slack's click carries a trigger id anyway.
        ...(view.editable ? [chat.Button({ id: EDIT_ACTION, label: 'Edit', value: view.callId, actionType: 'modal' })] : []),
      ]),
    );
  } else {
    const by = view.by.length === 0 ? '' : view.by.length === 2 ? ` by both ${view.by.join(' and ')}` : ` by ${view.by.join(', ')}`;
    const reason = view.reason === undefined ? '' : `: ${view.reason}`;
    fallbackText = `${OUTCOME[view.state]}${view.state === 'expired' ? '' : by}${reason}`;
    children.push(chat.CardText(fallbackText, { style: 'bold' }));
  }
  return { card: chat.Card({ title: `${notice ? 'Escalated approval' : 'Approval'}: ${view.tool}`, children }), fallbackText };
}
