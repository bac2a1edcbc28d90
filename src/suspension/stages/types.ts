import type { ContentBound } from '../content';
import type { Answer, ToolResult } from '../../results/wire';
import type { Telemetry } from '../../telemetry/telemetry';
import type { Clock } from '../../timing/clock';
import type { ToolContext } from '../../toolkit/context';
import type { Toolkit } from '../../toolkit/toolkit';
import type { FormatRefusal } from '../answers';
import type { Audit } from '../audit';
import type { Authority } from '../authority';
import type { Binding } from '../binding';
import type { Claim, Settlement, SuspendedCall, SuspensionStore } from '../store';

/*
 * What the stages of the path of an answer (docs/design.md) hand each other: each stage takes
 * the value the one before it made, typed, and nothing is looked up again or kept aside.
 */

/**
 * The call an answer is for, as the caller knows it (an agent run: its transcript's call).
 * `resolve` refuses a stored call that differs ({@link SuspensionMismatchError}) before anything runs.
 */
export interface ExpectedCall {
  tool: string;
  /** The arguments as the caller has them (the model's JSON text): compared as the Toolkit parses them. */
  args: unknown;
  callId?: string;
  runId?: string;
}

/**
 * What an answer does when another resolver holds the call's claim or settled it first:
 * `wait` for that outcome and return it (the default), or `refuse` with {@link ClaimHeldError}
 * at once, so exactly one of several answers racing for a call goes on (a chat's approval).
 */
export type IfClaimed = 'wait' | 'refuse';

/** How {@link ResumeCoordinator.resolve} meets another answer to the same call. */
export interface ResolveOptions {
  /** `refuse`: when another answer holds the claim or settled the call first, throw {@link ClaimHeldError} instead of waiting for its outcome. Default `wait`. */
  ifClaimed?: IfClaimed;
}

/** What the path of an answer works with: the coordinator's settings. */
export interface ResolutionSettings {
  toolkit: Toolkit;
  store: SuspensionStore;
  leaseMs: number;
  /** The coordinator's clock: lease heartbeats and the local hint that a lease lapsed. */
  clock: Clock;
  maxChain: number;
  /** The cap on an answer's `data` (the `maxAnswerBytes` option): what the read stage checks it under. */
  maxAnswerBytes: number;
  formatRefusal: FormatRefusal;
  binding: Binding;
  /** Who may answer: judged before the claim (docs/who-may-answer.md). */
  authority: Authority;
  /** Told after a quorum approval was recorded as a signature and the call still waits. */
  onSigned?: (call: SuspendedCall) => void;
  /** Told after a settlement is stored (never when this resolver's claim was lost). */
  onSettled?: (claim: Claim, settlement: Settlement) => void;
  /** Spans and counters of resolutions (docs/observability.md). */
  telemetry?: Telemetry;
  /** The bound for stored results: an outcome's media past it are kept by reference or described. */
  content: ContentBound;
}

/**
 * What the read stage makes of an answer: the answer and its audit as checked, the replay's
 * context, and the stored call as read once before its claim. `early`: the store read and
 * claimed the call in one statement (`SuspensionStore.claimEarly`), so the later stages judge
 * the call as read and give that claim back if they refuse the answer.
 */
export interface ReadAnswer {
  answer: Answer;
  audit: Audit | undefined;
  ctx: ToolContext | undefined;
  read: SuspendedCall;
  early?: Claim;
}

/**
 * What the judge stage decided: the answer goes on to the claim (edited arguments as the
 * tool's DTO parsed them; `call` as the quorum's signing left it), or the call still waits
 * for more signatures (`waiting`, and `signed`: the call with this new signature, to tell of).
 */
export type Judged = { answer: Answer; call: SuspendedCall } | { waiting: ToolResult; signed?: SuspendedCall };

/**
 * A claim this resolver won, and what its replay runs: the answer given, or on a takeover the
 * one the dead holder's claim recorded (`agrees` false when that one is not this answer's
 * decision: the call is settled as recorded and this answer refused). `answeredAt`: when the
 * answer replayed was first claimed (a takeover judges expiry then).
 */
export interface Won {
  claim: Claim;
  answer: Answer;
  agrees: boolean;
  answeredAt: string | undefined;
}
