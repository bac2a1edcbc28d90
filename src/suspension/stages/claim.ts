import { AnswerRefusedError, ClaimHeldError, ClaimLostError, SuspensionMismatchError, UnknownSuspensionError } from '../../errors';
import type { Answer, ToolResult } from '../../results/wire';
import { monotonicOf } from '../../timing/clock';
import { sleep } from '../../timing/sleep';
import { sameJson } from '../binding';
import { keptAnswer } from '../consumed';
import { leaseLooksLapsed, sameDecision, storedOutcome } from '../outcome';
import { isSettled } from '../status';
import type { Claim, SuspendedCall } from '../store';
import { claimedAnswer, claimedAudit, pendingAgain } from '../takeover';
import type { ReadAnswer, ResolutionSettings, Won } from './types';

/*
 * The claim stage of the path of an answer (docs/design.md): the store gives the call to one
 * answer (fence n), recording it as kept; a call settled already gives its stored outcome; a
 * call another resolver holds is waited for. A claim won is checked against the call as read,
 * and handed to the replay.
 */

const FIRST_POLL_MS = 2;
const MAX_POLL_MS = 50;

/** The answer to claim with, as judged, and the call as first read (what the claimed row must still be). */
export type Attempt = Omit<ReadAnswer, 'early'>;

/**
 * Claims the call, or returns the outcome it settled with, or waits for whoever holds it.
 * `lost`: this resolver's claim was lost during its replay, so it only waits (from a fresh
 * read) for an outcome another holder stores, and throws `lost` when nobody holds the call.
 */
export async function claimOrWait(
  settings: ResolutionSettings,
  attempt: Attempt,
  call: SuspendedCall,
  lost?: ClaimLostError,
): Promise<{ settled: ToolResult } | Won> {
  const { answer, ctx } = attempt;
  const { store, leaseMs, clock } = settings;
  const elapsed = monotonicOf(clock);
  const signal = ctx?.signal;
  let pause = FIRST_POLL_MS;
  let lastTry = Number.NEGATIVE_INFINITY;
  // A lost claim's row is stale: the loop then reads it again before it decides anything.
  for (let stale = lost !== undefined; ; stale = true) {
    if (stale) {
      // Polls on real time, whatever the clock: it waits for another holder's real I/O.
      await sleep(pause, signal).catch(() => undefined);
      pause = Math.min(pause * 2, MAX_POLL_MS);
      signal?.throwIfAborted();
      const next = await store.get(answer.id);
      if (!next) throw new UnknownSuspensionError(answer.id);
      call = next;
    }
    if (isSettled(call.status)) return { settled: storedOutcome(call, answer) };
    // The local clock only hints that a lease lapsed; the store's claim decides. A process
    // whose clock runs behind still tries twice a lease, so it never waits forever on a dead holder.
    const mayClaim = call.status === 'pending' || leaseLooksLapsed(call, clock) || elapsed() - lastTry >= leaseMs / 2;
    if (mayClaim && lost) {
      // This resolver's replay lost the claim; it never claims again, and nobody holds it now.
      if (call.status === 'pending' || leaseLooksLapsed(call, clock)) throw lost;
    } else if (mayClaim) {
      signal?.throwIfAborted();
      lastTry = elapsed();
      const won = await claimOnce(settings, attempt, call);
      if (won) return won;
    }
  }
}

/**
 * One claim, and the store decides: a pending call, or one whose lease lapsed by the store's
 * clock, is this answer's; any other is refused without waiting (nothing is applied).
 * @throws {@link ClaimHeldError} another answer holds the claim or settled the call.
 */
export async function claimOrRefuse(settings: ResolutionSettings, attempt: Attempt, call: SuspendedCall): Promise<Won> {
  const { answer, ctx } = attempt;
  if (isSettled(call.status)) throw new ClaimHeldError(answer.id);
  ctx?.signal?.throwIfAborted();
  const won = await claimOnce(settings, attempt, call);
  if (!won) throw new ClaimHeldError(answer.id);
  return won;
}

/**
 * The claim a store that claims early made with its read, checked as any claim won is
 * (see {@link checkClaimed}). It only claims a pending call: never a takeover, so expiry is
 * judged at this claim.
 */
export function earlyClaim(settings: ResolutionSettings, claim: Claim, answer: Answer, read: SuspendedCall): Won {
  checkClaimed(settings, claim, read);
  return { claim, answer, agrees: true, answeredAt: undefined };
}

/**
 * The recovery loop's claim of one call (`ResumeCoordinator.recoverLapsed`): a `resolving`
 * call whose holder's lease lapsed is taken over with the answer that holder's claim recorded,
 * under the takeover rule, with no new answer. `undefined` when the store gives the claim to
 * nobody here (a live holder, or another process took it first), or this process does not
 * register the tool.
 * @throws {@link AnswerRefusedError} the recorded answer is refused by its judgement at the
 * takeover ({@link refusedTakeover}): the call is `pending` again, and nothing ran.
 */
export async function takeOverClaim(settings: ResolutionSettings, read: SuspendedCall): Promise<Won | undefined> {
  const claimed = claimedAnswer(read);
  if (!claimed || !settings.toolkit.has(read.tool)) return undefined;
  const problem = settings.binding.problem(read);
  if (problem) throw new SuspensionMismatchError(read.request.id, problem);
  const claim = await settings.store.claim(read.request.id, claimed, settings.leaseMs, claimedAudit(read));
  if (!claim) return undefined;
  const refusal = await refusedTakeover(settings, claim, claimed);
  if (refusal) throw refusal;
  checkClaimed(settings, claim, read);
  return { claim, answer: claimed, agrees: true, answeredAt: claimed.ok ? read.answeredAt : undefined };
}

/**
 * Claims `call` for the attempt's answer. A call still `resolving` (its holder's lease lapsed)
 * is taken over with the answer its holder's claim recorded, never this one (docs/suspension.md,
 * "After a crash: the takeover rule"): that decision may have taken effect, so every door
 * continues it the same way, and an answer that contradicts it is refused once it is settled
 * (`agrees` false). A recorded answer the takeover's judgement refuses is given back instead
 * ({@link refusedTakeover}), and this answer, judged already, claims the call.
 * `undefined`: the store gave the claim to nobody here.
 */
async function claimOnce(settings: ResolutionSettings, attempt: Attempt, call: SuspendedCall): Promise<Won | undefined> {
  const { answer, audit, read } = attempt;
  const { store, leaseMs } = settings;
  const claimed = claimedAnswer(call);
  // The store keeps the answer without what the replay consumes (a login's code): see consumed.ts.
  const kept = keptAnswer(call.request, answer);
  const claim = claimed
    ? await store.claim(answer.id, claimed, leaseMs, claimedAudit(call))
    : await store.claim(answer.id, kept, leaseMs, audit);
  if (!claim) return undefined;
  if (claimed && (await refusedTakeover(settings, claim, claimed))) return claimOnce(settings, attempt, pendingAgain(claim.call));
  checkClaimed(settings, claim, read);
  // The given answer carries what the store does not keep (consumed fields): it runs when it is the same decision.
  const agrees = !claimed || sameDecision(kept, claimed);
  return { claim, answer: agrees ? answer : claimed, agrees, answeredAt: claimed?.ok ? call.answeredAt : undefined };
}

/**
 * A takeover's judgement of the answer it would continue (docs/who-may-answer.md, "A crash
 * under an early claim"). On a store that claims early, a claim may record an answer before it
 * is judged: a holder that died before giving a refused answer's claim back left that answer
 * recorded. So the recorded answer is judged again, with the recorded audit, on the row this
 * takeover claimed; refused, the call is given back `pending` ({@link pendingAgain}) and the
 * refusal returned: nothing runs on it. Stores without an early claim record only judged answers.
 */
async function refusedTakeover(settings: ResolutionSettings, claim: Claim, claimed: Answer): Promise<AnswerRefusedError | undefined> {
  const { store, authority } = settings;
  if (!store.restoreClaim) return undefined;
  try {
    await authority.judge(claim.call, claimed, claimedAudit(claim.call));
    return undefined;
  } catch (error) {
    if (!(error instanceof AnswerRefusedError)) throw error;
    // A crash before this restore leaves the claim to the next takeover, which judges it again.
    await store.restoreClaim(claim, pendingAgain(claim.call));
    return error;
  }
}

/**
 * The row as claimed is what replays, and it may have changed since it was checked: it must
 * still be the call that was recorded (its binding) and the call as read.
 * @throws {@link SuspensionMismatchError} it differs (the claim is held; nothing runs).
 */
function checkClaimed(settings: ResolutionSettings, claim: Claim, read: SuspendedCall): void {
  const { call } = claim;
  const problem = settings.binding.problem(call);
  if (problem) throw new SuspensionMismatchError(call.request.id, problem);
  if (call.tool !== read.tool || call.callId !== read.callId || call.runId !== read.runId || !sameJson(call.args, read.args))
    throw new SuspensionMismatchError(call.request.id, 'the call changed between the check and the claim');
}
