import type { AgentParts } from '../core/live-run';
import { budgetFeature } from './budget';
import { CANCEL } from './cancel';
import { SUB_AGENTS } from './sub-agents';
import { HANDOFFS } from './handoffs';
import { RunFeatures, type RunFeature } from '../core/feature';
import { guardrailsFeature } from './guardrails';
import { progressFeature } from './progress';
import { steeringFeature } from './steering';

/** No features: what a runner's parts hold until its own are composed from them. */
export const NO_FEATURES = new RunFeatures([]);

/**
 * A runner's features, composed once from its parts. Sub-agents first (a child's block stops
 * the turn before the caller's own cancel is read, as it did), cancel (a cancelled run says so
 * before a budget stops it), then the budget (a run may bring its own budget, so it is
 * always there; its hooks return at once for a run that counts nothing), steering (what it takes
 * at a turn's start, the guardrails after it judge), the guardrails when the runner has some,
 * then progress.
 */
export function runnerFeatures(parts: AgentParts): RunFeatures {
  const features: RunFeature[] = [SUB_AGENTS, HANDOFFS, CANCEL, budgetFeature(parts), steeringFeature(parts)];
  if (parts.guardrails) features.push(guardrailsFeature(parts, parts.guardrails));
  features.push(progressFeature(parts));
  return new RunFeatures(features);
}
