import type { AgentParts } from '../live-run';
import { budgetFeature } from './budget';
import { CANCEL } from './cancel';
import { RunFeatures, type RunFeature } from './feature';
import { guardrailsFeature } from './guardrails';
import { progressFeature } from './progress';

/** No features: what a runner's parts hold until its own are composed from them. */
export const NO_FEATURES = new RunFeatures([]);

/**
 * A runner's features, composed once from its parts. Cancel first (a cancelled run says so
 * before anything else stops it), then the budget (a run may bring its own budget, so it is
 * always there; its hooks return at once for a run that counts nothing), the guardrails when the
 * runner has some, then progress.
 */
export function runnerFeatures(parts: AgentParts): RunFeatures {
  const features: RunFeature[] = [CANCEL, budgetFeature(parts)];
  if (parts.guardrails) features.push(guardrailsFeature(parts, parts.guardrails));
  features.push(progressFeature(parts));
  return new RunFeatures(features);
}
