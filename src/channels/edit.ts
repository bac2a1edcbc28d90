import { AlreadyResolvedError, AnswerRefusedError, InvalidAnswerError, UnknownSuspensionError } from '../errors';
import { messageOf } from '../errors/message';
import { inputFields, type InputField } from '../inbox/input-schema';
import { answerAs } from '../runner/answer-as';
import type { ResumeCoordinator } from '../suspension/coordinator';
import { quorumOf } from '../suspension/quorum';
import { redactCall } from '../suspension/redact';
import type { SuspendedCall } from '../suspension/store';
import { answererOf, clickerOf, UNMAPPED, type ClickParts } from './clicks';
import type { ActionEventLike, ModalBuilders, ModalSubmitLike, ModalSubmitResponse } from './peer';

/**
 * The callback id of the Edit modal is this, a colon and the call's id. The callback id carries
 * the call because it is the one part of a modal every adapter brings back with the submission:
 * Teams' dialog keeps no private metadata (the Chat SDK's Teams adapter submits none).
 */
export const EDIT_MODAL = 'toolnexus.edit';

/** The longest callback id a modal takes (Slack's `callback_id` allows 255 characters). */
const MAX_CALLBACK_ID = 255;

/** The call an Edit modal's callback id names, or `undefined` when it is not one. */
export function editedCallOf(callbackId: string): string | undefined {
  return callbackId.startsWith(`${EDIT_MODAL}:`) ? callbackId.slice(EDIT_MODAL.length + 1) : undefined;
}

/** What an edit needs of the channel: a click's parts, the coordinator, and the `chat` module's modal builders. */
export interface EditParts extends ClickParts {
  coordinator: ResumeCoordinator;
  modal: ModalBuilders;
}

/** The longest value one modal field takes (Slack's plain text input allows 3000). */
const MAX_FIELD = 3000;
/** The most fields one modal holds (Slack allows 100 blocks); the others keep their values. */
const MAX_FIELDS = 50;

/**
 * The fields an approver may edit in a modal: the tool's input schema's flat fields whose value
 * the redaction leaves as it is. A `@Sensitive` field is neither shown nor asked for on a
 * platform: it keeps its value (docs/channels.md, "Edit").
 */
function editableFields(coordinator: ResumeCoordinator, call: SuspendedCall): { fields: InputField[]; shown: Record<string, unknown> } {
  const registered = coordinator.toolkit.get(call.tool);
  const all = registered ? (inputFields({ schema: registered.inputSchema }) ?? []) : [];
  const asked = isRecord(call.args) ? call.args : {};
  const redacted = redactCall(coordinator.toolkit, call).args;
  const shown = isRecord(redacted) ? redacted : {};
  const fields = all.filter(
    (field) => !field.writeOnly && (!(field.name in asked) || JSON.stringify(asked[field.name]) === JSON.stringify(shown[field.name])),
  );
  return { fields: fields.slice(0, MAX_FIELDS), shown };
}

/**
 * Whether a call's card offers Edit: a pending approval that allows edited arguments and needs
 * no quorum. A request a sub-agent surfaced never allows them: its runner leaves `editable` out
 * (the answer that resumes the child carries no arguments).
 */
export function offersEdit(call: SuspendedCall): boolean {
  return call.status === 'pending' && call.request.data?.editable === true && !quorumOf(call.request);
}

/**
 * A click on Edit: the same checks as Approve (a card this channel posted for that call, a mapped
 * principal who may answer it), then a modal with the editable fields, filled with the call's
 * values; its submission is {@link submitEdit}. Whoever is refused is told privately.
 */
export async function openEdit(parts: EditParts, event: ActionEventLike): Promise<void> {
  const { callId, principal, tell } = await clickerOf(parts, event);
  if (!principal) return;
  const call = await parts.coordinator.get(callId);
  // A sub-agent's own request is answered as the one its run surfaced, which takes no arguments.
  if (!call || !offersEdit(call) || (await parts.outermost(callId)) !== callId) return tell('This request can no longer be edited.');
  if (!(await parts.coordinator.actionsOf(principal, call)).includes('answer')) return tell('You may not answer this request.');
  const { fields, shown } = editableFields(parts.coordinator, call);
  if (fields.length === 0 || !event.openModal) return tell('This request has no fields that can be edited here.');
  const callbackId = `${EDIT_MODAL}:${callId}`;
  if (callbackId.length > MAX_CALLBACK_ID) return tell('This request cannot be edited here: edit it in the inbox.');
  const m = parts.modal;
  const inputs = fields.map((field) => {
    const value = shown[field.name];
    return m.TextInput({
      id: field.name,
      label: (field.title ?? field.name).slice(0, 150),
      optional: !field.required,
      maxLength: MAX_FIELD,
      ...(value === undefined ? {} : { initialValue: (typeof value === 'string' ? value : JSON.stringify(value)).slice(0, MAX_FIELD) }),
    });
  });
  const opened = await event.openModal(m.Modal({ callbackId, title: 'Edit and approve', submitLabel: 'Approve', children: inputs }));
  // An adapter without modals (the Chat SDK answers undefined) leaves Approve and Decline.
  if (opened === undefined) await tell('Editing is not available here: approve or decline it as it is, or edit it in the inbox.');
}

/**
 * The Edit modal submitted: the typed values, read by their schema types, replace the editable
 * fields (a `@Sensitive` one keeps its value), and the approval with these arguments goes
 * through `answerAs` like every answer (the policy, separation of duties, the DTO's validation).
 * A refusal or a bad value is shown in the modal, and nothing is stored; the cards follow.
 * The call is the one the modal's callback id names, and must have a card this channel posted
 * on the submitter's platform: Teams' submission comes from the client, so a forged call id is
 * refused unless its request was delivered there (the policy judges the submitter either way).
 */
export async function submitEdit(parts: EditParts, event: ModalSubmitLike): Promise<ModalSubmitResponse | undefined> {
  const callId = editedCallOf(event.callbackId);
  if (callId === undefined) return undefined; // not an Edit modal of this channel's
  const call = callId === '' ? undefined : await parts.coordinator.get(callId);
  if (!call) return { action: 'close' };
  // A modal's submission names no message: any card of the call on the submitter's platform.
  const who = await answererOf(parts, { callId, platform: event.adapter.name, user: event.user });
  if ('refused' in who && who.refused === 'card') return { action: 'close' };
  const { fields } = editableFields(parts.coordinator, call);
  const first = fields[0]?.name ?? 'error';
  const refuse = (message: string): ModalSubmitResponse => ({ action: 'errors', errors: { [first]: message.slice(0, 300) } });
  // A sub-agent's own request is answered as the one its run surfaced, which takes no arguments
  // (and `answerAs` refuses edited arguments to that one: it is not `editable`).
  if ((await parts.outermost(callId)) !== callId) return refuse('This request can no longer be edited.');
  if ('refused' in who) return refuse(UNMAPPED);
  const { principal } = who;
  const args: Record<string, unknown> = { ...(isRecord(call.args) ? call.args : {}) };
  const errors: Record<string, string> = {};
  for (const field of fields) {
    // A field the modal did not hold keeps its value.
    if (!Object.hasOwn(event.values, field.name)) continue;
    const typed = (event.values[field.name] ?? '').trim();
    if (typed === '') delete args[field.name];
    else {
      const value = valueOf(field, typed);
      if (value === undefined) errors[field.name] = `must be ${TYPE_WORDS[field.type]}`;
      else args[field.name] = value;
    }
  }
  if (Object.keys(errors).length > 0) return { action: 'errors', errors };
  try {
    const answered = await answerAs(
      parts.host,
      { id: callId, ok: true, args },
      { by: principal, comment: `edited in ${event.adapter.name}` },
    );
    // Someone else's answer came first (or the deadline did): said in the modal, as a click is told.
    if (answered.call.status === 'expired') return refuse('This request expired before your answer.');
    if (!answered.won)
      return refuse(`This request was already answered${answered.winner ? ` by ${answered.winner.name ?? answered.winner.id}` : ''}.`);
  } catch (error) {
    if (error instanceof InvalidAnswerError) {
      // Shown at the field the DTO's words name, else at the first.
      const message = messageOf(error);
      const words = new Set(message.split(/[^\w$]+/));
      const named = fields.find((field) => words.has(field.name))?.name ?? first;
      return { action: 'errors', errors: { [named]: message.slice(0, 300) } };
    }
    if (error instanceof AnswerRefusedError) return refuse(`You may not answer this request: ${error.reason}`);
    if (error instanceof AlreadyResolvedError) return refuse('This request was already answered.');
    if (error instanceof UnknownSuspensionError) return refuse('This request is no longer stored.');
    parts.fail(error);
    return refuse('Your answer could not be recorded; try again.');
  }
  await parts.refresh(callId);
  return undefined;
}

const TYPE_WORDS: Record<InputField['type'], string> = {
  string: 'text',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
};

/** A typed value as its schema type reads it, or `undefined` when it is not one. */
function valueOf(field: InputField, typed: string): unknown {
  if (field.type === 'string') return typed;
  if (field.type === 'boolean') return typed === 'true' ? true : typed === 'false' ? false : undefined;
  const number = Number(typed);
  if (!Number.isFinite(number) || (field.type === 'integer' && !Number.isInteger(number))) return undefined;
  return number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
