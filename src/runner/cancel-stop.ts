import { RunCancelledError } from '../errors';
import type { RunStop } from './types';

/** The stop a run's signal says, when it was aborted by a cancel (on its own: the live run's module reads it too). */
export function cancelStopOf(signal: AbortSignal | undefined): RunStop | undefined {
  const reason: unknown = signal?.aborted ? signal.reason : undefined;
  if (!(reason instanceof RunCancelledError)) return undefined;
  return reason.reason === undefined ? { status: 'cancelled' } : { status: 'cancelled', reason: reason.reason };
}
