import { RunCancelledError } from '../../errors';
import type { AbortLatch } from '../../timing/abort-latch';
import type { AgentParts } from './live-run';
import type { RunOptions } from './options';
import type { RunStop } from './types';

/** The stop a run's latch (or a signal) says, when it was aborted by a cancel (on its own: the live run's module reads it too). */
export function cancelStopOf(aborted: { readonly aborted: boolean; readonly reason: unknown } | undefined): RunStop | undefined {
  const reason: unknown = aborted?.aborted ? aborted.reason : undefined;
  if (!(reason instanceof RunCancelledError)) return undefined;
  return reason.reason === undefined ? { status: 'cancelled' } : { status: 'cancelled', reason: reason.reason };
}

/**
 * Whether someone can cancel a new run while a call of it is in flight, so its model calls and
 * tools get a real signal: the caller gave one, it is streamed (its consumer may stop reading),
 * the caller named it (and may `cancel` it by that id; a session's run is named so), or it has
 * durable steps (a lost lease, or a `cancel` through the store, aborts it). Otherwise nothing
 * is made: a `cancel` by the id its tools see stops the run at its next step.
 */
export function armed(parts: Pick<AgentParts, 'durability'>, options: RunOptions, streamLatch: AbortLatch | undefined): boolean {
  return streamLatch !== undefined || options.signal !== undefined || options.runId !== undefined || parts.durability === 'step';
}
