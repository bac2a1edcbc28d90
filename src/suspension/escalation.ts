import type { PendingRequest } from '../results/wire';
import type { Clock } from '../timing/clock';
import type { SuspensionStore } from './store';

/** When a request's escalation comes due (epoch ms) and who may answer it from then on. */
export interface Escalation {
  at: number;
  to: readonly string[];
}

/** The escalation a request declares in `data.escalation` (`{ at: RFC 3339, to: principal ids }`), when well-formed. */
export function escalationOf(request: PendingRequest): Escalation | undefined {
  const escalation = request.data?.escalation as { at?: unknown; to?: unknown } | undefined;
  if (typeof escalation !== 'object' || escalation === null) return undefined;
  const at = typeof escalation.at === 'string' ? Date.parse(escalation.at) : Number.NaN;
  const to = escalation.to;
  if (Number.isNaN(at) || !Array.isArray(to) || !to.every((id) => typeof id === 'string')) return undefined;
  return { at, to: to };
}

/**
 * The instant escalations and expiries are judged at: the store's clock, as leases are (so every
 * process sharing the store agrees), else `fallback` for a store that keeps no clock of its own.
 */
export async function storeNow(store: SuspensionStore, fallback: Clock): Promise<number> {
  return typeof store.now === 'function' ? store.now() : fallback.now();
}
