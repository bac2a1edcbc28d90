import { addChildSpend } from '../core/child-run';
import { RUN_BUDGET, type AgentParts } from '../core/live-run';
import { callersBudgetStop, leftForChild, modelCallStop, spendOnModel, spendOnTool, startSpending } from './spending';
import { stoppingRefusal } from '../core/stops';
import type { RunFeature } from '../core/feature';

/**
 * Budgets (a run's, its session's) and spending as a feature: counted from the run's start (or
 * its checkpoint's), checked before each model call and each tool call, passed down to a
 * sub-agent as what is left, and a sub-agent's spending added. Each hook returns at once for a
 * run that counts nothing (no budget, no prices).
 */
export function budgetFeature(parts: AgentParts): RunFeature {
  return {
    name: 'budget',
    start(live, kept) {
      if (kept?.budget) live.budget = kept.budget;
      if (kept?.sessionBudget) live.sessionBudget = kept.sessionBudget;
      startSpending(parts, live, kept?.spend);
    },
    // A run at its turn limit makes no model call: it ends `incomplete`, not over budget.
    beforeModel: (live) => (live.turns < parts.maxTurns ? modelCallStop(parts, live) : undefined),
    afterModel(live, usage) {
      if (live.spend) spendOnModel(parts, live, usage);
    },
    beforeTool(live) {
      const spent = live.spend ? spendOnTool(parts, live) : undefined;
      return spent ? stoppingRefusal(spent, "not run: the run's budget is spent") : undefined;
    },
    toolContext(live, _call, ctx) {
      // A sub-agent this call runs may spend what is left of the run's budget, no more.
      const left = leftForChild(live);
      if (left) Object.assign(ctx, { [RUN_BUDGET]: left });
      return undefined;
    },
    afterTool(live, result) {
      if (live.spend) addChildSpend(live.spend, result);
    },
    // A sub-agent that spent the budget spent the caller's: its own figures, its spending added.
    onStop: (live, stop) => (stop.status === 'budget_exceeded' ? callersBudgetStop(live, stop) : stop),
  };
}
