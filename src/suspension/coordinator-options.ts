import type { ContentOptions } from './content';
import { InvalidArgumentError } from '../errors';
import type { PendingRequest } from '../results/wire';
import type { TelemetryOption } from '../telemetry/options';
import { systemClock, type Clock } from '../timing/clock';
import type { Toolkit } from '../toolkit/toolkit';
import { DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_CHAIN, formatRefusal, type FormatRefusal, type WaitFor } from './answers';
import type { SuspensionObserver } from './observer';
import type { Principal } from './audit';
import type { AnswerPolicy } from './policy';
import type { AutomaticAnswers } from './automatic';
import type { SuspensionStore } from './store';

/** Options of a {@link ResumeCoordinator}. */
export interface ResumeCoordinatorOptions {
  /** The tools calls run through; a resolving process must register the same tools. */
  toolkit: Toolkit;
  /**
   * Where suspended calls are kept. Default: a {@link MemorySuspensionStore}. The coordinator
   * checks everything it hands the store; the store keeps it (docs/design.md, "Stores").
   */
  store?: SuspensionStore;
  /**
   * In-process posture: when set, `execute` awaits the answer and replays inline, and
   * nothing is recorded. When absent (durable posture), suspensions are recorded and
   * `execute` returns the pending result at once.
   */
  waitFor?: WaitFor;
  /**
   * How long a claim holds without renewal. The holder renews it every third of this while
   * its replay runs, so it bounds how long a call stays stuck after its holder died, not how
   * long a replay may take. Default 60 000 ms.
   */
  leaseMs?: number;
  /**
   * Where the coordinator reads the time and runs its timers: a replay's lease heartbeat, the
   * hint that another holder's lease lapsed, an inline answer's expiry and the timestamps of the
   * calls it records. Default: the system clock; tests pass a fake one to step through renewals
   * and expiry. The stores judge leases by their own clock (docs/design.md, glossary: "clock").
   */
  clock?: Clock;
  /** How many requests one call may chain (login, then approval, ...) before it ends `unresolved`. Default 4. */
  maxChain?: number;
  /** Words the text fed back for a declined, expired or cancelled suspension. */
  formatRefusal?: FormatRefusal;
  /**
   * A secret that makes every stored call's binding digest an HMAC, so a call edited in the
   * store cannot be made to pass. Keep it out of the database; every process needs the same.
   */
  bindingKey?: string | Uint8Array;
  /**
   * Largest `data` an answer to `resolve` may carry, in bytes of its JSON; a larger one is an
   * {@link InvalidAnswerError} and nothing is stored. Default 64 KiB (65 536).
   */
  maxAnswerBytes?: number;
  /**
   * Told of every recorded suspension and every settlement, after the store write, with the
   * call redacted (e.g. a {@link Webhooks}); more can be added with {@link ResumeCoordinator.observe}.
   */
  observers?: SuspensionObserver[];
  /**
   * OpenTelemetry: a `resolve_suspension {tool}` span per answer that wins its claim, linked to
   * the span that suspended, and the suspension counter; by the global providers unless this
   * picks others or turns them off (docs/observability.md).
   */
  telemetry?: TelemetryOption;
  /**
   * Who may answer what (docs/who-may-answer.md): judged inside the path of every answer,
   * whichever front end brings it. With a policy, an answer that names no principal is refused.
   * Default: none (every answer is taken, as before).
   */
  policy?: AnswerPolicy;
  /**
   * With a policy, refuse an approval given by the principal the call was requested for (the
   * run's `principal`, recorded as the call's `requestedBy`). Default true when a policy is set.
   */
  separationOfDuties?: boolean;
  /**
   * Answers approval requests by rule before a person is asked, or (with `shadow`) records what
   * it would have decided beside the person's answer (docs/who-may-answer.md, "Automatic answers").
   */
  automaticAnswers?: AutomaticAnswers;
  /**
   * How stored results keep their media (docs/agents.md, "Rich results"): at most
   * `maxInlineBytes` inline per result (default 1 MiB), the rest in `store` by reference, or
   * described in words without one. Applied to every outcome this coordinator stores and to
   * every result a runner on it keeps in a checkpoint.
   */
  content?: ContentOptions;
}

/** Where a call sits in a run, and how this one call is answered inline. */
export interface ExecuteOptions {
  /** The provider's tool-call id, stable across resume. */
  callId?: string;
  /** The agent run the call belongs to. */
  runId?: string;
  /** Answer this call's suspensions inline with this function instead of the coordinator's posture. */
  waitFor?: WaitFor;
  /** Told of every request before `waitFor` is asked for it. */
  onPending?: (request: PendingRequest) => void;
  /** On whose behalf the call runs (an agent run's principal): recorded as a suspension's `requestedBy`. */
  principal?: Principal;
  /** The chat session the call's run belongs to: a standing grant of scope `session` covers it. */
  session?: string;
}

/** Default claim lease. */
export const DEFAULT_LEASE_MS = 60_000;

/** The options a coordinator runs by, checked and with their defaults. */
export interface CoordinatorSettings {
  leaseMs: number;
  maxChain: number;
  maxAnswerBytes: number;
  clock: Clock;
  formatRefusal: FormatRefusal;
  waitFor?: WaitFor;
  policy?: AnswerPolicy;
  separationOfDuties: boolean;
}

/** Checks a coordinator's options, in the order their messages have always come; fills in the defaults. */
export function coordinatorSettings(options: ResumeCoordinatorOptions): CoordinatorSettings {
  if (!options || typeof options.toolkit?.execute !== 'function') throw new InvalidArgumentError('ResumeCoordinator needs a toolkit');
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  if (!Number.isFinite(leaseMs) || leaseMs <= 0)
    throw new InvalidArgumentError(`leaseMs must be a positive number of milliseconds, got ${String(options.leaseMs)}`);
  const maxChain = options.maxChain ?? DEFAULT_MAX_CHAIN;
  if (!Number.isInteger(maxChain) || maxChain < 1)
    throw new InvalidArgumentError(`maxChain must be a positive integer, got ${String(options.maxChain)}`);
  const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  if (!Number.isSafeInteger(maxAnswerBytes) || maxAnswerBytes < 1) {
    throw new InvalidArgumentError(`maxAnswerBytes must be a positive integer number of bytes, got ${String(options.maxAnswerBytes)}`);
  }
  if (options.waitFor !== undefined && typeof options.waitFor !== 'function') throw new InvalidArgumentError('waitFor must be a function');
  if (options.formatRefusal !== undefined && typeof options.formatRefusal !== 'function')
    throw new InvalidArgumentError('formatRefusal must be a function');
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== 'function' || typeof clock.setTimeout !== 'function' || typeof clock.clearTimeout !== 'function')
    throw new InvalidArgumentError('clock must have now, setTimeout and clearTimeout');
  if (options.policy !== undefined && typeof options.policy !== 'function')
    throw new InvalidArgumentError('policy must be a function (question) => "allow" | { deny } (rulesPolicy([...]) makes one)');
  if (options.separationOfDuties !== undefined && typeof options.separationOfDuties !== 'boolean')
    throw new InvalidArgumentError('separationOfDuties must be a boolean');
  const settings: CoordinatorSettings = {
    leaseMs,
    maxChain,
    maxAnswerBytes,
    clock,
    formatRefusal: options.formatRefusal ?? formatRefusal,
    separationOfDuties: options.separationOfDuties ?? options.policy !== undefined,
  };
  if (options.waitFor !== undefined) settings.waitFor = options.waitFor;
  if (options.policy !== undefined) settings.policy = options.policy;
  return settings;
}
