import { ATTR } from '../../telemetry/conventions';
import type { OtelSpan } from '../../telemetry/otel';
import { countSuspension } from '../../telemetry/suspension';
import type { Tracing } from '../../telemetry/telemetry';
import { evaluateApproval } from '../evaluation';
import type { Claim, Settlement, SuspendedCall } from '../store';
import type { ResolutionSettings } from './types';

/*
 * The tell stage of the path of an answer (docs/design.md): once the store kept what an answer
 * did, telemetry counts it and the observers (webhooks, channels, the inbox's feed) are told,
 * after the store write, never before, and never of a claim that was lost.
 */

/** Tells of a stored settlement: the resolution span's status, the counters, a person's approval, the observers. */
export function tellSettled(
  settings: ResolutionSettings,
  claim: Claim,
  stored: Settlement,
  tracing: Tracing | undefined,
  span: OtelSpan | undefined,
): void {
  if (tracing) {
    const { call } = claim;
    const registered = settings.toolkit.has(call.tool);
    span?.setAttribute(ATTR.suspensionStatus, stored.status);
    countSuspension(tracing, stored.status, call.tool, registered, call.request.kind);
    evaluateApproval(tracing, settings.toolkit, call, stored.status);
    if (stored.next) countSuspension(tracing, 'pending', call.tool, registered, stored.next.request.kind);
  }
  settings.onSettled?.(claim, stored);
}

/** Tells of a quorum signature that leaves the call waiting (`signed`: the call with it). */
export function tellSigned(settings: ResolutionSettings, signed: SuspendedCall): void {
  settings.onSigned?.(signed);
}
