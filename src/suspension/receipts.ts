import { InvalidArgumentError } from '../errors';
import type { Clock } from '../timing/clock';
import type { Receipt, ReceiptInit, ToolContext } from '../toolkit/context';
import type { Claim, Settlement, SuspendedCall, SuspensionStore } from './store';

/** How many receipts one call keeps over all its attempts: a tool that records one per request of a loop is refused past it. */
export const MAX_RECEIPTS = 50;

const LIMITS = { system: 100, id: 200, status: 100 } as const;
const MAX_DETAIL = 20;

/**
 * A receipt as given, checked once, where a tool records it: three short non-empty strings and a
 * few scalar details. A bad one is refused with `InvalidArgumentError` and nothing is stored.
 */
export function checkReceipt(init: ReceiptInit): ReceiptInit {
  if (typeof init !== 'object' || init === null) throw new InvalidArgumentError('a receipt must be an object { system, id, status }');
  const receipt: ReceiptInit = { system: init.system, id: init.id, status: init.status };
  for (const field of ['system', 'id', 'status'] as const) {
    const value: unknown = init[field];
    if (typeof value !== 'string' || value === '' || value.length > LIMITS[field])
      throw new InvalidArgumentError(`a receipt's ${field} must be a non-empty string of at most ${LIMITS[field]} characters`);
  }
  if (init.detail !== undefined) {
    const entries = typeof init.detail === 'object' && init.detail !== null ? Object.entries(init.detail) : undefined;
    const scalar = (v: unknown): boolean => v === null || ['string', 'number', 'boolean'].includes(typeof v);
    if (entries === undefined || entries.length > MAX_DETAIL || !entries.every(([, v]) => scalar(v)))
      throw new InvalidArgumentError(`a receipt's detail must be an object of at most ${MAX_DETAIL} scalar values`);
    receipt.detail = Object.fromEntries(entries);
  }
  return receipt;
}

/** One line a person reads: `stripe says ch_123 succeeded (attempt 1)`. */
export function receiptLine(receipt: Receipt): string {
  return `${receipt.system} says ${receipt.id} ${receipt.status} (attempt ${receipt.attempt})`;
}

/**
 * What one replay under a claim records: `ctx.receipt` writes each receipt to the claimed row at
 * once (`SuspensionStore.recordReceipt`), so a receipt survives a crash before the outcome; the
 * settlement then carries every receipt of the call, earlier attempts' first, in the outcome's
 * own write (a store without `recordReceipt` keeps them there only).
 */
export class ReceiptRecorder {
  private readonly recorded: Receipt[] = [];

  constructor(
    private readonly store: SuspensionStore,
    private readonly claim: Claim,
    private readonly clock: Clock,
  ) {}

  /** What a replay's context carries: `ctx.receipt`, and `ctx.receipts` when earlier attempts recorded any. */
  context(): Pick<ToolContext, 'receipt' | 'receipts'> {
    const earlier = (this.claim.call.receipts ?? []).map(copyReceipt);
    return earlier.length > 0 ? { receipt: this.record, receipts: earlier } : { receipt: this.record };
  }

  /** The function a replay's context carries as `ctx.receipt`. */
  readonly record = async (init: ReceiptInit): Promise<void> => {
    const checked = checkReceipt(init);
    if ((this.claim.call.receipts?.length ?? 0) + this.recorded.length >= MAX_RECEIPTS)
      throw new InvalidArgumentError(`a call keeps at most ${MAX_RECEIPTS} receipts`);
    const receipt: Receipt = { ...checked, at: new Date(this.clock.now()).toISOString(), attempt: this.claim.fence };
    this.recorded.push(receipt);
    // A lost claim records nothing: its replay's outcome is not stored either.
    await this.store.recordReceipt?.(this.claim, copyReceipt(receipt));
  };

  /** `settlement` carrying every receipt of the call (and its next link too: the same call). */
  settle(settlement: Settlement): Settlement {
    return withReceipts(settlement, [...(this.claim.call.receipts ?? []), ...this.recorded]);
  }
}

/** `settlement` with `receipts` kept with its outcome and passed on to its next link; unchanged without any. */
export function withReceipts(settlement: Settlement, receipts: readonly Receipt[] | undefined): Settlement {
  if (receipts === undefined || receipts.length === 0) return settlement;
  const all = receipts.map(copyReceipt);
  const next: SuspendedCall | undefined = settlement.next && { ...settlement.next, receipts: all.map(copyReceipt) };
  return { ...settlement, receipts: all, ...(next ? { next } : {}) };
}

function copyReceipt(receipt: Receipt): Receipt {
  return { ...receipt, ...(receipt.detail ? { detail: { ...receipt.detail } } : {}) };
}
