import { InvalidArgumentError } from '../../errors';
import type { Usage } from '../../models/types';
import { spendSoFar, type AgentParts, type LiveRun } from '../core/live-run';
import {
  asSessions,
  beforeModelCall,
  callersStop,
  beforeToolCall,
  budgetOf,
  costOf,
  priceOf,
  remaining,
  sessionSpent,
  tighter,
  type Budget,
  type Spend,
  type Spent,
} from '../core/budget';
import type { RunStop } from '../core/types';

/** What the run has spent so far, its wall time driving it in this process included. */
export function spentNow(live: LiveRun): Spent {
  const spend = spendSoFar(live) ?? { costUsd: 0, toolCalls: 0, wallMs: 0 };
  return { usage: live.usage, spend, wallMs: spend.wallMs };
}

/**
 * Starts counting a run's spending in this process: from zero for a new run, or from what its
 * checkpoint kept. Counted when it has a budget or the runner prices its model.
 */
export function startSpending(parts: AgentParts, live: LiveRun, kept: Spend | undefined): void {
  if (!live.budget && !live.sessionBudget && !parts.prices) return;
  live.spend = kept ? { ...kept } : { costUsd: 0, toolCalls: 0, wallMs: 0 };
  live.clock = parts.clock;
  live.drivenSince = parts.clock.now();
}

/** The cost of a model call the run made, added to what it spent. */
export function spendOnModel(parts: AgentParts, live: LiveRun, usage: Usage): void {
  const spend = live.spend;
  if (!spend) return;
  const price = priceOf(parts.prices, parts.model);
  const cost = price ? costOf(price, usage) : 0;
  spend.costUsd += cost;
  live.lastCostUsd = cost;
}

/**
 * A tool call about to start: undefined when it may (counted), else the stop the budget
 * makes (the call does not run).
 */
export function spendOnTool(parts: AgentParts, live: LiveRun): RunStop | undefined {
  const spend = live.spend;
  if (!spend) return undefined;
  const spent = spentNow(live);
  const session = live.sessionBudget;
  const stop =
    (live.budget ? beforeToolCall(live.budget, spent) : undefined) ??
    (session ? asSessions(beforeToolCall(session.budget, sessionSpent(session, spent))) : undefined);
  if (!stop) spend.toolCalls++;
  return stop;
}

/** The stop a model call would make, when the run's budget would not bear it. */
export function modelCallStop(parts: AgentParts, live: LiveRun): RunStop | undefined {
  const session = live.sessionBudget;
  if (!live.budget && !session) return undefined;
  const spent = spentNow(live);
  const last = { usage: live.turnUsage.at(-1), costUsd: live.lastCostUsd ?? 0 };
  return (
    (live.budget ? beforeModelCall(live.budget, spent, last) : undefined) ??
    (session ? asSessions(beforeModelCall(session.budget, sessionSpent(session, spent), last)) : undefined)
  );
}

/**
 * A budget stop a turn's calls brought (a call not run, a sub-agent that spent a limit) as this
 * run's: the limit with this run's budget and spending, or its session's (`scope: 'session'`)
 * when the session's budget is the one passed.
 */
export function callersBudgetStop(live: LiveRun, found: RunStop & { status: 'budget_exceeded' }): RunStop {
  const spent = spentNow(live);
  const session = live.sessionBudget;
  const sessions = session !== undefined && session.budget[found.limit] !== undefined;
  if (sessions && (found.scope === 'session' || live.budget?.[found.limit] === undefined))
    return asSessions(callersStop(session.budget, sessionSpent(session, spent), found)) as RunStop;
  return callersStop(live.budget, spent, found);
}

/** What a sub-agent this run calls may spend: what is left of the run's budget and of its session's, the tighter. */
export function leftForChild(live: LiveRun): Budget | undefined {
  const session = live.sessionBudget;
  if (!live.budget && !session) return undefined;
  const spent = spentNow(live);
  return tighter(
    live.budget ? remaining(live.budget, spent) : undefined,
    session ? remaining(session.budget, sessionSpent(session, spent)) : undefined,
  );
}

/**
 * A run's budget as it starts: its own (else the runner's), no looser than what a calling
 * run left it; checked against the runner's prices when it limits cost.
 */
export function startBudget(parts: AgentParts, own: Budget | undefined, inherited: Budget | undefined): Budget | undefined {
  const budget = tighter(budgetOf(own, 'budget') ?? parts.budget, inherited);
  if (budget) checkPriced(parts, budget);
  return budget;
}

/** A budget that limits cost needs the runner to price its model. */
export function checkPriced(parts: Pick<AgentParts, 'prices' | 'model'>, budget: Budget): void {
  if (budget.costUsd !== undefined && !priceOf(parts.prices, parts.model))
    throw new InvalidArgumentError(
      `the budget limits costUsd, but the runner has no price for model ${JSON.stringify(parts.model.model ?? parts.model.provider)}: give prices`,
    );
}
