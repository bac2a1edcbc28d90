import { InvalidAnswerError, InvalidArgumentError, StoreError, UnknownSuspensionError } from '../errors';
import { pending } from '../results/helpers';
import type { Answer, ToolResult } from '../results/wire';
import type { Toolkit } from '../toolkit/toolkit';
import type { Audit } from './audit';
import { approvalsOf, declinesOf, quorumOf, type Quorum } from './quorum';
import type { SuspendedCall, SuspensionStore } from './store';

/**
 * An approval with edited arguments, where the request allows it (docs/who-may-answer.md,
 * "Edit"), with the arguments as the tool's DTO parses them: what the store keeps and the
 * replay runs with.
 * @throws {@link InvalidAnswerError} the request allows no edit, or the edit does not validate.
 */
export async function editedAnswer(toolkit: Toolkit, read: SuspendedCall, answer: Answer): Promise<Answer> {
  const id = read.request.id;
  if (read.request.data?.editable !== true) throw new InvalidAnswerError(`${id} does not allow edited arguments`);
  if (quorumOf(read.request)) throw new InvalidAnswerError(`${id} needs a quorum: its arguments cannot be edited`);
  const prepared = await toolkit.prepare(read.tool, answer.args);
  if (!prepared.ok) throw new InvalidAnswerError(`the edited arguments of ${id} are invalid: ${prepared.problem}`);
  const stored = prepared.stored;
  if (!stored.ok) throw new InvalidAnswerError(`the edited arguments of ${id} cannot be stored: ${stored.problem}`);
  return { ...answer, args: JSON.parse(stored.json) as Record<string, unknown> };
}

/**
 * Records `audit.by`'s approval of a quorum request (docs/who-may-answer.md, "Quorum"): the
 * call still waits (its pending result, with the quorum's progress) until `quorum.of`
 * principals signed; then the caller claims it. `onSigned` is told of a new signature that
 * leaves the call waiting.
 */
export async function signQuorum(
  store: SuspensionStore,
  read: SuspendedCall,
  quorum: Quorum,
  audit: Audit | undefined,
  onSigned: ((call: SuspendedCall) => void) | undefined,
): Promise<{ waiting: ToolResult } | { call: SuspendedCall }> {
  const { by, after } = await signature(store, read, audit, `${quorum.of} approvals`, 'an approval', false);
  const signed = approvalsOf(after.signatures).length;
  if (after.status !== 'pending' || signed >= quorum.of) return { call: after };
  if (!read.signatures?.some((s) => s.by.id === by.id)) onSigned?.(after);
  const waiting = pending(after.request);
  waiting.output = `${after.request.prompt} (approved by ${signed} of the ${quorum.of} needed)`;
  waiting.metadata = { ...waiting.metadata, quorum: { of: quorum.of, signatures: after.signatures ?? [] } };
  return { waiting };
}

/**
 * Records `audit.by`'s decline of a quorum request that takes several (`quorum.declines` > 1):
 * the call still waits (its pending result, with the declines so far) until that many distinct
 * principals declined; then the caller settles it declined. A principal's first word counts:
 * one who approved cannot then decline, nor the reverse. `onSigned` is told of a new decline
 * that leaves the call waiting, as of a signature.
 */
export async function declineQuorum(
  store: SuspensionStore,
  read: SuspendedCall,
  quorum: Quorum & { declines: number },
  audit: Audit | undefined,
  onSigned: ((call: SuspendedCall) => void) | undefined,
): Promise<{ waiting: ToolResult } | { call: SuspendedCall }> {
  const { by, after } = await signature(store, read, audit, `${quorum.declines} declines`, 'a decline', true);
  const declined = declinesOf(after.signatures).length;
  if (after.status !== 'pending' || declined >= quorum.declines) return { call: after };
  if (!read.signatures?.some((s) => s.by.id === by.id)) onSigned?.(after);
  const waiting = pending(after.request);
  waiting.output = `${after.request.prompt} (declined by ${declined} of the ${quorum.declines} needed to refuse it)`;
  waiting.metadata = { ...waiting.metadata, quorum: { of: quorum.of, declines: quorum.declines, signatures: after.signatures ?? [] } };
  return { waiting };
}

/** Records one signature (an approval, or a decline when `declined`) of `audit.by`; `needs` and `one` word the errors. */
async function signature(
  store: SuspensionStore,
  read: SuspendedCall,
  audit: Audit | undefined,
  needs: string,
  one: string,
  declined: boolean,
): Promise<{ by: NonNullable<Audit['by']>; after: SuspendedCall }> {
  const id = read.request.id;
  const by = audit?.by;
  if (by === undefined) throw new InvalidArgumentError(`${id} needs ${needs}: ${one} must name its principal`);
  if (typeof store.sign !== 'function')
    throw new StoreError(`${id} needs ${needs}, and this store cannot keep signatures (it has no sign method)`);
  const after = declined ? await store.sign(id, by, audit?.comment, true) : await store.sign(id, by, audit?.comment);
  if (!after) throw new UnknownSuspensionError(id);
  return { by, after };
}
