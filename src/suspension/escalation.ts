import type { PendingRequest } from '../results/wire';

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
