import type { PendingRequest } from '../results/wire';

/** A request's quorum: how many distinct principals must approve, and who may (all the policy allows, when absent). */
export interface Quorum {
  of: number;
  from?: readonly string[];
}

/** The quorum a request declares in `data.quorum`, when it declares a well-formed one of two or more. */
export function quorumOf(request: PendingRequest): Quorum | undefined {
  if (request.kind !== 'approval') return undefined;
  const quorum = request.data?.quorum as Partial<Quorum> | undefined;
  if (typeof quorum !== 'object' || quorum === null) return undefined;
  if (!Number.isSafeInteger(quorum.of) || (quorum.of as number) < 2) return undefined;
  const from = quorum.from;
  if (from !== undefined && !(Array.isArray(from) && from.every((id) => typeof id === 'string'))) return undefined;
  return from === undefined ? { of: quorum.of as number } : { of: quorum.of as number, from };
}
