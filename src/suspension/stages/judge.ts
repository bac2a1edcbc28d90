import { UnregisteredToolError } from '../../errors';
import type { Answer } from '../../results/wire';
import { isExpired } from '../answers';
import { quorumOf } from '../quorum';
import { editedAnswer, signQuorum } from '../signing';
import { isSettled } from '../status';
import type { SuspendedCall } from '../store';
import type { Judged, ReadAnswer, ResolutionSettings } from './types';

/*
 * The judge stage of the path of an answer (docs/design.md, docs/who-may-answer.md): whether
 * this answer may be given (the answer policy, separation of duties, escalation, the
 * sub-agent path: authority.ts), an approver's edit as the tool's DTO parses it, a quorum's
 * signature, and whether this process can run what the answer decides. A refused answer
 * changes nothing and learns nothing of the outcome.
 */

/**
 * Judges `answer` on the call as read. A quorum approval is a signature until the last one
 * needed, and so is a decline of a quorum that takes several: those before it leave the call
 * waiting (`waiting`); the last one needed goes on to the claim with the call as signed.
 * After an early claim (`early`) there is no edit and no quorum: the store claimed neither.
 * @throws {@link AnswerRefusedError} the answer may not be given (observers told).
 * @throws {@link InvalidAnswerError} an edit the request allows not, or that does not validate.
 * @throws {@link UnregisteredToolError} an approval of a call whose tool this process lacks.
 */
export async function judge(settings: ResolutionSettings, { answer, audit, read, early }: ReadAnswer): Promise<Judged> {
  await settings.authority.judge(read, answer, audit);
  if (early) {
    assertRunnable(settings, answer, read);
    return { answer, call: read };
  }
  // Edited arguments are checked by the tool's DTO now: a bad edit is refused, nothing stored.
  const given = answer.args === undefined ? answer : await editedAnswer(settings.toolkit, read, answer);
  let call = read;
  const quorum = read.status === 'pending' ? quorumOf(read.request) : undefined;
  if (quorum && (given.ok || (given.reason === 'declined' && (quorum.declines ?? 1) > 1))) {
    const signed = await signQuorum(settings.store, read, quorum, audit, !given.ok);
    if ('waiting' in signed) return signed;
    call = signed.call;
  }
  // A settled call gives its stored outcome (or says the answer conflicts), whatever runs here.
  if (!isSettled(call.status)) assertRunnable(settings, given, call);
  return { answer: given, call };
}

/** An approval of a call whose tool this process lacks is refused before the claim (nothing changes). */
function assertRunnable({ toolkit, clock }: ResolutionSettings, answer: Answer, call: SuspendedCall): void {
  if (answer.ok && !isExpired(call.request, new Date(clock.now())) && !toolkit.has(call.tool))
    throw new UnregisteredToolError(answer.id, call.tool);
}
