import { storable } from '../json';
import type { Claim, Settlement } from '../store';
import { checkInsertable } from '../validate';
import type { ResolutionSettings } from './types';

/*
 * The settle stage of the path of an answer (docs/design.md): the replay's settlement stored
 * for this claim's fence only, with the chain's next link inserted in the same atomic step.
 * Every later resolve of the call returns the outcome stored here.
 */

/**
 * Stores `settlement` for `claim`: its outcome within the content bound (media past it kept by
 * reference or described) and as plain JSON, its next link checked once. Returns what was
 * stored; `undefined` when the claim's fence is no longer the call's (another process took it over).
 */
export async function settle(settings: ResolutionSettings, claim: Claim, settlement: Settlement): Promise<Settlement | undefined> {
  const stored = { ...settlement, outcome: storable(await settings.content.keep(settlement.outcome)) };
  if (stored.next) checkInsertable(stored.next, 'complete (next link)');
  return (await settings.store.complete(claim, stored)) ? stored : undefined;
}
