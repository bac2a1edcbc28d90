import type { Answer } from '../../results/wire';
import { withLatch } from '../../timing/abort-latch';
import type { ToolContext } from '../../toolkit/context';
import type { RanCall } from '../../toolkit/prepared';
import { isExpired, refusalOf, refused } from '../answers';
import { withIdempotencyKey } from '../idempotency';
import { LeaseKeeper } from '../lease';
import { recoveryOf, settlementOf } from '../outcome';
import { ReceiptRecorder, withReceipts } from '../receipts';
import type { Settlement } from '../store';
import { replaysOnTakeover } from '../takeover';
import type { ResolutionSettings, Won } from './types';

/*
 * The replay stage of the path of an answer (docs/design.md): what a won claim decides. A
 * refusal (or an expired request) is settled without running anything; an approval replays
 * the tool once from the stored call, under a renewed lease, with `{ ...ctx, answer, replay }`;
 * a takeover of a tool that is not idempotent becomes a `recovery` request (the takeover rule).
 */

/**
 * The settlement a won claim decides, for the settle stage to store; `undefined` when the
 * claim was lost during the replay (its lease lapsed and another process took it).
 */
export async function replay(settings: ResolutionSettings, won: Won, ctx: ToolContext | undefined): Promise<Settlement | undefined> {
  const { claim, answer, answeredAt } = won;
  const { call } = claim;
  // Expiry is judged when the answer was first claimed: a taken-over approval was given in time.
  const at = new Date(answeredAt ?? claim.at);
  if (isExpired(call.request, at) || !answer.ok) {
    const refusal = refusalOf(call.request, answer, at);
    return { status: refusal.status, outcome: refused(refusal, settings.formatRefusal) };
  }
  // The tool sees who answered, whichever front end recorded them (docs/suspension.md).
  let answered: Answer = call.answeredBy === undefined ? answer : { ...answer, answeredBy: { ...call.answeredBy } };
  // A quorum's replay sees every approval (ctx.approval.signatures).
  if (call.signatures !== undefined) answered = { ...answered, signatures: call.signatures.map((s) => ({ ...s, by: { ...s.by } })) };
  // A takeover (fence > 1): an earlier holder began this replay and stored nothing, so the
  // tool may have taken effect. The takeover rule (takeover.ts): an idempotent tool runs
  // again with the same idempotency key; any other becomes a `recovery` request.
  if (claim.fence > 1 && !replaysOnTakeover(settings.toolkit, call.tool))
    return withReceipts(recoveryOf(settings, call, answered), call.receipts);
  const keeper = new LeaseKeeper(settings.store, claim, settings.leaseMs, ctx?.signal, settings.clock);
  const receipts = new ReceiptRecorder(settings.store, claim, settings.clock);
  let ran: RanCall;
  try {
    const chain = call.chain ?? [];
    // The call's own ids, whichever front end answered: a tool keys its side effect on
    // `callId`, so the replay must see what the first run saw (and `runner.resume` passes).
    const ids = {
      ...(call.callId !== undefined ? { callId: call.callId } : {}),
      ...(call.runId !== undefined ? { runId: call.runId } : {}),
    };
    // Receipts are written to the claimed row when recorded, so a crash before the outcome keeps them.
    const context: ToolContext = { ...ctx, ...ids, answer: answered, replay: { request: call.request, chain, fence: claim.fence } };
    Object.assign(context, receipts.context());
    // The same key the first execution had: of the call's run and call id.
    withIdempotencyKey(context, ids);
    // The replay runs from the stored call, prepared once (a tool changed since refuses it here).
    // An approver's edit, as the claim recorded it, is what runs.
    const prepared = await settings.toolkit.prepare(call.tool, call.answer?.args ?? call.args);
    ran = await settings.toolkit.runTraced(prepared, withLatch(context, keeper.cancellation));
  } finally {
    keeper.stop();
  }
  if (keeper.lost) return undefined;
  return receipts.settle(settlementOf(settings, call, answered, ran));
}
