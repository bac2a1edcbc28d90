import type { PendingRequest, Signature } from '../results/wire';

/** A request's quorum: how many distinct principals must approve, and who may (all the policy allows, when absent). */
export interface Quorum {
  of: number;
  from?: readonly string[];
  /** How many distinct declines settle it declined; 1 (the first decline) when absent. */
  declines?: number;
}

/** The approvals among a call's signatures (a quorum's declines are kept beside them). */
export function approvalsOf(signatures: readonly Signature[] | undefined): Signature[] {
  return (signatures ?? []).filter((signature) => signature.declined !== true);
}

/** The declines among a call's signatures. */
export function declinesOf(signatures: readonly Signature[] | undefined): Signature[] {
  return (signatures ?? []).filter((signature) => signature.declined === true);
}

/** The quorum a request declares in `data.quorum`, when it declares a well-formed one of two or more. */
export function quorumOf(request: PendingRequest): Quorum | undefined {
  if (request.kind !== 'approval') return undefined;
  const quorum = request.data?.quorum as Partial<Quorum> | undefined;
  if (typeof quorum !== 'object' || quorum === null) return undefined;
  if (!Number.isSafeInteger(quorum.of) || (quorum.of as number) < 2) return undefined;
  const from = quorum.from;
  if (from !== undefined && !(Array.isArray(from) && from.every((id) => typeof id === 'string'))) return undefined;
  const declines = quorum.declines;
  if (declines !== undefined && !(Number.isSafeInteger(declines) && declines >= 1)) return undefined;
  return { of: quorum.of as number, ...(from === undefined ? {} : { from }), ...(declines === undefined ? {} : { declines }) };
}
