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
 * Records `audit.by`'s signature of a quorum request (docs/who-may-answer.md, "Quorum"): an
 * approval, or with `declined` a decline of a quorum that takes several (`quorum.declines` > 1).
 * The call still waits (its pending result, with the quorum's progress) until `quorum.of`
 * principals approved, or `quorum.declines` declined; then the caller claims it (`call`). A
 * principal's first word counts: one who approved cannot then decline, nor the reverse.
 * `signed` is the call with this principal's new signature, when it is new and the call still
 * waits: what the observers are told of.
 */
export async function signQuorum(
  store: SuspensionStore,
  read: SuspendedCall,
  quorum: Quorum,
  audit: Audit | undefined,
  declined: boolean,
): Promise<{ waiting: ToolResult; signed?: SuspendedCall } | { call: SuspendedCall }> {
  const needed = declined ? (quorum.declines ?? 1) : quorum.of;
  const [needs, one] = declined ? [`${needed} declines`, 'a decline'] : [`${needed} approvals`, 'an approval'];
  const { by, after } = await signature(store, read, audit, needs, one, declined);
  const counted = (declined ? declinesOf(after.signatures) : approvalsOf(after.signatures)).length;
  if (after.status !== 'pending' || counted >= needed) return { call: after };
  const waiting = pending(after.request);
  waiting.output = declined
    ? `${after.request.prompt} (declined by ${counted} of the ${needed} needed to refuse it)`
    : `${after.request.prompt} (approved by ${counted} of the ${needed} needed)`;
  const progress = { of: quorum.of, ...(declined ? { declines: needed } : {}), signatures: after.signatures ?? [] };
  waiting.metadata = { ...waiting.metadata, quorum: progress };
  return read.signatures?.some((s) => s.by.id === by.id) ? { waiting } : { waiting, signed: after };
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
