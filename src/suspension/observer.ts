import type { Toolkit } from '../toolkit/toolkit';
import { redactCall } from './redact';
import type { AnswerRefusal } from './authority';
import type { Grant } from './grants';
import type { Claim, Settlement, SuspendedCall } from './store';

/**
 * Told when a suspension is recorded and when one settles, after the store write
 * (docs/operating.md, "Webhooks"). Calls are redacted first (`redactCall`): an observer never
 * sees a `@Sensitive` value. Methods must return at once: they run on the path of the
 * tool call, and what they throw is dropped, never thrown into the call.
 */
export interface SuspensionObserver {
  /** A new pending call: recorded by `execute`, or the next link of a chain stored by a settlement. */
  onPending?(call: SuspendedCall): void;
  /** A call settled (resolved, declined, expired, cancelled), with its outcome and audit fields. */
  onSettled?(call: SuspendedCall): void;
  /** An answer the answer policy refused: the call as it stays (unchanged), who was refused, and why. */
  onRefused?(call: SuspendedCall, refusal: AnswerRefusal): void;
  /** A quorum approval was recorded as a signature; the call still waits for more (its `signatures` say who signed). */
  onSigned?(call: SuspendedCall): void;
  /** A request's escalation came due: the principals it names may now answer it (docs/who-may-answer.md, "Escalation"). */
  onEscalated?(call: SuspendedCall): void;
  /** A standing grant was given (docs/who-may-answer.md, "Grants"). */
  onGranted?(grant: Grant): void;
  /** A standing grant was revoked: it covers nothing from the next request on. */
  onRevoked?(grant: Grant): void;
}

/** The observers of one coordinator; tells each of them, redacting once per event. */
export class Observers {
  private readonly observers = new Set<SuspensionObserver>();

  constructor(private readonly toolkit: Toolkit) {}

  get size(): number {
    return this.observers.size;
  }

  add(observer: SuspensionObserver): () => void {
    this.observers.add(observer);
    return () => {
      this.observers.delete(observer);
    };
  }

  pending(call: SuspendedCall): void {
    this.tell('onPending', call);
  }

  settled(call: SuspendedCall): void {
    this.tell('onSettled', call);
  }

  /** Tells of a stored settlement: the call as settled (lease released), then the chain's next link. */
  settlement(claim: Claim, settlement: Settlement, now: number): void {
    if (this.observers.size === 0) return;
    const { leaseUntil: _released, ...held } = claim.call;
    const settled: SuspendedCall = {
      ...held,
      status: settlement.status,
      outcome: settlement.outcome,
      updatedAt: new Date(now).toISOString(),
    };
    if (settlement.next) settled.next = settlement.next.request.id;
    this.settled(settled);
    if (settlement.next) this.pending(settlement.next);
  }

  signed(call: SuspendedCall): void {
    this.tell('onSigned', call);
  }

  escalated(call: SuspendedCall): void {
    this.tell('onEscalated', call);
  }

  granted(grant: Grant): void {
    this.tellGrant('onGranted', grant);
  }

  revoked(grant: Grant): void {
    this.tellGrant('onRevoked', grant);
  }

  refused(call: SuspendedCall, refusal: AnswerRefusal): void {
    if (this.observers.size === 0) return;
    let shown: SuspendedCall;
    try {
      shown = redactCall(this.toolkit, call);
    } catch {
      return;
    }
    for (const observer of this.observers) {
      try {
        observer.onRefused?.(structuredClone(shown), structuredClone(refusal));
      } catch {
        // An observer's failure is its own.
      }
    }
  }

  private tellGrant(event: 'onGranted' | 'onRevoked', grant: Grant): void {
    for (const observer of this.observers) {
      try {
        observer[event]?.(structuredClone(grant));
      } catch {
        // An observer's failure is its own.
      }
    }
  }

  private tell(event: 'onPending' | 'onSettled' | 'onSigned' | 'onEscalated', call: SuspendedCall): void {
    if (this.observers.size === 0) return;
    let shown: SuspendedCall;
    try {
      shown = redactCall(this.toolkit, call);
    } catch {
      return; // a call that cannot be copied is not shown at all
    }
    for (const observer of this.observers) {
      try {
        observer[event]?.(structuredClone(shown));
      } catch {
        // An observer's failure is its own: the call it watches goes on.
      }
    }
  }
}
