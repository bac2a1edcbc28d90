import { handoffOf } from './handoff';
import type { RunFeature } from '../core/feature';

/**
 * Handoffs (docs/agents.md, "Handoffs") as a feature: a handoff call's result moves the
 * conversation to its agent (`live.agent`, which the checkpoint keeps); the loop then gives the
 * next turn to that agent's parts. Any runner may be handed a conversation, so every one composes it.
 */
export const HANDOFFS: RunFeature = {
  name: 'handoffs',
  afterTool(live, result) {
    const to = handoffOf(result);
    if (to !== undefined) live.agent = to;
  },
};
