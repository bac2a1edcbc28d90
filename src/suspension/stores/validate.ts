import { InvalidArgumentError } from '../../errors';
import { isSuspensionStatus } from '../status';
import type { SuspendedCall } from '../store';

/**
 * Refuses a call no store should keep: a programmer error in whoever builds it. Checked
 * before anything is written, so a refused insert stores nothing.
 */
export function checkInsertable(call: SuspendedCall): void {
  if (call === null || typeof call !== 'object') throw new InvalidArgumentError('insert: the call must be an object');
  const { request } = call;
  if (request === null || typeof request !== 'object' || typeof request.id !== 'string' || request.id === '') {
    throw new InvalidArgumentError('insert: call.request.id must be a non-empty string');
  }
  const what = `suspension ${request.id}`;
  if (typeof request.kind !== 'string') throw new InvalidArgumentError(`insert: ${what} has no string request.kind`);
  if (typeof call.tool !== 'string' || call.tool === '') throw new InvalidArgumentError(`insert: ${what} has no tool name`);
  if (!isSuspensionStatus(call.status)) throw new InvalidArgumentError(`insert: ${what} has unknown status ${JSON.stringify(call.status)}`);
  if (typeof call.createdAt !== 'string' || Number.isNaN(Date.parse(call.createdAt))) {
    throw new InvalidArgumentError(`insert: ${what} has no RFC 3339 createdAt`);
  }
  for (const key of ['callId', 'runId', 'updatedAt'] as const) {
    if (call[key] !== undefined && typeof call[key] !== 'string') throw new InvalidArgumentError(`insert: ${what} has a non-string ${key}`);
  }
  if (call.leaseUntil !== undefined && (typeof call.leaseUntil !== 'string' || Number.isNaN(Date.parse(call.leaseUntil)))) {
    throw new InvalidArgumentError(`insert: ${what} has a leaseUntil that is not RFC 3339`);
  }
}
