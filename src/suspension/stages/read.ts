import { InvalidAnswerError, UnknownSuspensionError } from '../../errors';
import type { Answer } from '../../results/wire';
import type { ToolContext } from '../../toolkit/context';
import { assertStorableId, checkAnswer, isAnswerWithCall, isCheckedAnswer, storedCallOf, type CheckedAnswer } from '../answers';
import { checkedAudit, withCommentAsReason, type Audit } from '../audit';
import { keepSystemMark } from '../authority';
import type { SuspendedCall } from '../store';
import type { ReadAnswer, ResolutionSettings } from './types';

/*
 * The read stage of the path of an answer (docs/design.md): the answer and its audit checked
 * once, and the stored call read once before its claim, or taken from the answer that carries
 * it (`ResumeCoordinator.read`), or read and claimed in one statement by a store that claims early.
 */

/**
 * `answer` checked as `ResumeCoordinator.checkAnswer` checks it: a {@link CheckedAnswer}
 * checked under a cap no larger than `maxAnswerBytes` is taken as it is.
 * @throws {@link InvalidAnswerError} the answer is malformed. {@link UnknownSuspensionError}: its id is one no store could hold.
 */
export function checkedAnswerOf(answer: unknown, maxAnswerBytes: number): CheckedAnswer {
  if (isCheckedAnswer(answer, maxAnswerBytes)) {
    assertStorableId(answer.id);
    return answer;
  }
  const checked = checkAnswer(answer, maxAnswerBytes);
  if (!checked.ok) throw new InvalidAnswerError(`invalid answer: ${checked.problem}`);
  assertStorableId(checked.answer.id);
  return checked.answer;
}

/**
 * `resolve`'s read: checks the answer and the audit (a decline's comment becoming its reason),
 * refuses an aborted caller before the answer is spent, and reads the stored call once. With
 * a store that claims early, the read and the claim are one statement (one round trip fewer:
 * docs/performance.md); the later stages judge the call as read and give a refused answer's
 * claim back. Not for an edit: it is checked by the tool's DTO before anything is written.
 * @throws {@link UnknownSuspensionError} no store holds the id.
 */
export async function readAnswer(
  settings: ResolutionSettings,
  answer: Answer,
  audit: Audit | undefined,
  ctx: ToolContext | undefined,
): Promise<ReadAnswer> {
  const { store, leaseMs } = settings;
  const checked = checkedAnswerOf(answer, settings.maxAnswerBytes);
  const recorded = keepSystemMark(audit, audit === undefined ? undefined : checkedAudit(audit, 'resolve'));
  // An aborted caller must not spend the answer: the call stays as it is for a later resolve.
  ctx?.signal?.throwIfAborted();
  // The replay is given the answer, not the read it carried.
  if (isAnswerWithCall(checked, store))
    return knownRead(withCommentAsReason({ ...checked }, recorded?.comment), recorded, ctx, storedCallOf(checked));
  const given = withCommentAsReason(checked, recorded?.comment);
  if (given.args !== undefined || !store.claimEarly || !store.restoreClaim)
    return knownRead(given, recorded, ctx, await store.get(given.id));
  const early = await store.claimEarly(given.id, given, leaseMs, recorded);
  if (!early?.claim) return knownRead(given, recorded, ctx, early?.read);
  return { answer: given, audit: recorded, ctx, read: early.read, early: early.claim };
}

/**
 * The read of a call a caller already has (a cancellation, a standing answer, the sweep):
 * `read` as it was read, `undefined` when no store holds it.
 * @throws {@link UnknownSuspensionError} no store holds the id.
 */
export function knownRead(
  answer: Answer,
  audit: Audit | undefined,
  ctx: ToolContext | undefined,
  read: SuspendedCall | undefined,
): ReadAnswer {
  if (!read) throw new UnknownSuspensionError(answer.id);
  return { answer, audit, ctx, read };
}
