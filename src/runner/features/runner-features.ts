import type { AgentParts } from '../live-run';
import { budgetFeature } from './budget';
import { CANCEL } from './cancel';
import { RunFeatures } from './feature';
import { progressFeature } from './progress';

/** No features: what a runner's parts hold until its own are composed from them. */
export const NO_FEATURES = new RunFeatures([]);

/**
 * A runner's features, composed once from its parts. Cancel first (a cancelled run says so
 * before anything else stops it), then the budget (a run may bring its own budget, so it is
 * always there; its hooks return at once for a run that counts nothing), then progress.
 */
export function runnerFeatures(parts: AgentParts): RunFeatures {
  return new RunFeatures([CANCEL, budgetFeature(parts), progressFeature(parts)]);
}
