import type { Usage } from '../../models/types';

/** An empty count. */
export function zeroUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0 };
}

/**
 * Adds one call's counts to a run's total. The optional counts appear in the total once
 * some call reported them, so a total never claims a zero the provider did not say.
 */
export function addUsage(total: Usage, usage: Usage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
  if (usage.cachedInputTokens !== undefined) total.cachedInputTokens = (total.cachedInputTokens ?? 0) + usage.cachedInputTokens;
  if (usage.cacheWriteInputTokens !== undefined)
    total.cacheWriteInputTokens = (total.cacheWriteInputTokens ?? 0) + usage.cacheWriteInputTokens;
  if (usage.reasoningTokens !== undefined) total.reasoningTokens = (total.reasoningTokens ?? 0) + usage.reasoningTokens;
}

/** A plain copy of one call's counts (the model's object is not kept). */
export function copyUsage(usage: Usage): Usage {
  const copy = zeroUsage();
  addUsage(copy, usage);
  return copy;
}
