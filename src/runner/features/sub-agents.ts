import type { ToolCall } from '../../models/types';
import type { ToolResult } from '../../results/wire';
import { SUB_AGENT_EVENTS, subAgentStop, subAgentUsage } from '../core/child-run';
import type { LiveRun } from '../core/live-run';
import type { RunStop } from '../core/types';
import { addUsage } from '../core/usage';
import type { RunFeature } from '../core/feature';

/**
 * The calling side of sub-agents (docs/agents.md, "Sub-agents") as a feature: a call's context
 * carries the run's stream, so a child run's events join it; a child's usage is added to the
 * run's; and a child run a guardrail blocked, or that spent a limit of the caller's budget,
 * stops the caller. Any tool may be a sub-agent, so every runner composes it.
 */
export const SUB_AGENTS: RunFeature = {
  name: 'sub-agents',
  toolContext(live, _call, ctx) {
    if (live.emit) Object.assign(ctx, { [SUB_AGENT_EVENTS]: live.emit });
    return undefined;
  },
  afterTool(live, result) {
    const usage = subAgentUsage(result);
    if (usage) addUsage(live.usage, usage);
  },
  afterTools: (live, calls, results) => childStop(live, calls, results),
};

/**
 * A stop a turn's results report: a sub-agent's run that a guardrail blocked or that spent a
 * limit of the caller's budget (passed down). A cancelled sub-agent is its call's failure, not
 * the caller's stop.
 */
function childStop(live: LiveRun, calls: readonly ToolCall[], results: readonly ToolResult[]): RunStop | undefined {
  for (let i = 0; i < results.length; i++) {
    const child = subAgentStop(results[i] as ToolResult);
    if (child?.status === 'blocked') return { ...child, path: [(calls[i] as ToolCall).name, ...(child.path ?? [])] };
    // Only a limit the caller set is the caller's: a child's own tighter budget is its call's failure.
    if (child?.status === 'budget_exceeded' && (live.budget?.[child.limit] ?? live.sessionBudget?.budget[child.limit]) !== undefined)
      return child;
  }
  return undefined;
}
