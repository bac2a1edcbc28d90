import { AlreadyResolvedError, ClaimLostError } from '../errors';
import type { Answer, ToolResult } from '../results/wire';
import type { OtelSpan } from '../telemetry/otel';
import { startResolution } from '../telemetry/suspension';
import type { Tracing } from '../telemetry/telemetry';
import type { ToolContext } from '../toolkit/context';
import type { Audit } from './audit';
import type { SuspendedCall } from './store';
import { claimOrRefuse, claimOrWait, earlyClaim, takeOverClaim, type Attempt } from './stages/claim';
import { identify } from './stages/identify';
import { judge } from './stages/judge';
import { knownRead, readAnswer } from './stages/read';
import { replay } from './stages/replay';
import { settle } from './stages/settle';
import { tellSettled, tellSigned } from './stages/tell';
import type { ExpectedCall, ReadAnswer, ResolutionSettings, ResolveOptions, Won } from './stages/types';

export type { ExpectedCall, IfClaimed, ResolutionSettings, ResolveOptions } from './stages/types';

/**
 * The durable path of an answer (docs/design.md, "The path of an answer"), its stages in one
 * direction, each a module of `stages/` entered once and handed the value the stage before it
 * made: **read** (the answer checked, the call read once before its claim), **identify** (the
 * call is the one recorded, and the one the caller expects), **judge** (who may answer, an
 * edit, a quorum's signature), **claim** (one winner; or the stored outcome; or a wait for
 * whoever holds it), **replay**, **settle** (the outcome stored for the claim's fence) and
 * **tell** (telemetry and observers). Nothing here reads the store or calls back up.
 */
export class Resolution {
  constructor(private readonly settings: ResolutionSettings) {}

  /** `ResumeCoordinator.resolve`: the whole path, from the answer as given. */
  async resolve(
    answer: Answer,
    ctx: ToolContext | undefined,
    audit: Audit | undefined,
    expected: ExpectedCall | undefined,
    options: ResolveOptions = {},
  ): Promise<ToolResult> {
    return this.fromRead(await readAnswer(this.settings, answer, audit, ctx), expected, options);
  }

  /**
   * The path from a call its caller already read (a cancellation, a standing answer, the
   * sweep; `undefined`: no store holds it), with an answer and audit checked already.
   * `audit` is recorded by the claim that wins, with the answer.
   */
  async checkAndClaim(
    answer: Answer,
    read: SuspendedCall | undefined,
    ctx: ToolContext | undefined,
    audit?: Audit,
    expected?: ExpectedCall,
    options: ResolveOptions = {},
  ): Promise<ToolResult> {
    return this.fromRead(knownRead(answer, audit, ctx, read), expected, options);
  }

  /**
   * The recovery loop's step for one call (`ResumeCoordinator.recoverLapsed`): see
   * `takeOverClaim`. `undefined` when nobody here may take it over.
   * @throws {@link AnswerRefusedError} the recorded answer is refused at the takeover: the call is `pending` again, and nothing ran.
   */
  async takeOver(read: SuspendedCall, ctx: ToolContext | undefined): Promise<ToolResult | undefined> {
    const won = await takeOverClaim(this.settings, read);
    return won && this.finish(won, ctx);
  }

  /** Identify, judge, claim, then replay, settle and tell what the claim decides. */
  private async fromRead(
    read: ReadAnswer,
    expected: ExpectedCall | undefined,
    { ifClaimed = 'wait' }: ResolveOptions,
  ): Promise<ToolResult> {
    const { ctx, early } = read;
    let judged;
    try {
      await identify(this.settings, read.read, expected);
      // Before anything else is written: a refused answer changes nothing and learns nothing of the outcome.
      judged = await judge(this.settings, read);
      if (early) ctx?.signal?.throwIfAborted();
    } catch (error) {
      // An early claim of an answer refused is given back as it was read (docs/who-may-answer.md).
      if (early) await this.settings.store.restoreClaim?.(early, read.read);
      throw error;
    }
    if ('waiting' in judged) {
      if (judged.signed) tellSigned(this.settings, judged.signed);
      return judged.waiting;
    }
    const attempt: Attempt = { answer: judged.answer, audit: read.audit, ctx, read: read.read };
    let won: Won;
    if (early) won = earlyClaim(this.settings, early, judged.answer, read.read);
    else if (ifClaimed === 'refuse') won = await claimOrRefuse(this.settings, attempt, judged.call);
    else {
      const claimed = await claimOrWait(this.settings, attempt, judged.call);
      if ('settled' in claimed) return claimed.settled;
      won = claimed;
    }
    const settled = await this.finish(won, ctx);
    if (settled === undefined) {
      // This resolver's replay lost its claim: it waits for the outcome another holder stores.
      const lost = new ClaimLostError(won.claim.id, won.claim.fence);
      if (ifClaimed === 'refuse') throw lost;
      const outcome = await claimOrWait(this.settings, attempt, won.claim.call, lost);
      return (outcome as { settled: ToolResult }).settled;
    }
    if (!won.agrees) throw new AlreadyResolvedError(won.claim.id, won.answer.ok ? 'approved' : 'declined', won.claim.call.runId);
    return settled;
  }

  /** Replays, settles and tells what a won claim decides, inside its resolution span; `undefined` when the claim was lost meanwhile. */
  private async finish(won: Won, ctx: ToolContext | undefined): Promise<ToolResult | undefined> {
    const tracing = this.settings.telemetry?.active();
    if (!tracing) return this.replayed(won, ctx, undefined, undefined);
    const { span, context } = startResolution(tracing, won.claim.call);
    try {
      const settled = await tracing.within(context, () => this.replayed(won, ctx, tracing, span));
      if (settled === undefined) tracing.fail(span, 'claim_lost');
      else span?.end();
      return settled;
    } catch (error) {
      tracing.fail(span, 'exception');
      throw error;
    }
  }

  private async replayed(
    won: Won,
    ctx: ToolContext | undefined,
    tracing: Tracing | undefined,
    span: OtelSpan | undefined,
  ): Promise<ToolResult | undefined> {
    const settlement = await replay(this.settings, won, ctx);
    const stored = settlement && (await settle(this.settings, won.claim, settlement));
    if (!stored) return undefined;
    tellSettled(this.settings, won.claim, stored, tracing, span);
    return stored.outcome;
  }
}
