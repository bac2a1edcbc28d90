import type { SettledStatus, SuspensionStatus } from './store';

/** Every status a suspended call can have, in life-cycle order. */
export const SUSPENSION_STATUSES: readonly SuspensionStatus[] = ['pending', 'resolving', 'resolved', 'declined', 'expired', 'cancelled'];

/** True once a call can never run again. */
export function isSettled(status: SuspensionStatus): status is SettledStatus {
  return status !== 'pending' && status !== 'resolving';
}

/** True for one of {@link SUSPENSION_STATUSES}. */
export function isSuspensionStatus(value: unknown): value is SuspensionStatus {
  return typeof value === 'string' && (SUSPENSION_STATUSES as readonly string[]).includes(value);
}
