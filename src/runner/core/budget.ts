import { InvalidArgumentError } from '../../errors';
import type { ChatModel, Usage } from '../../models/types';
import type { SessionSpending } from '../../sessions/store';
import type { BudgetLimit, RunStop } from './types';

/**
 * The most a run may spend (docs/agents.md, "Budgets"): tokens (input, output, both), US
 * dollars (priced by `AgentRunnerOptions.prices`), tool calls, and wall time spent driving
 * it (not the time it waits, halted, for a person). A sub-agent's spending counts in its
 * caller's run; what was spent is kept in the checkpoint, so a resume in another process goes
 * on counting.
 */
export interface Budget {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  costUsd?: number;
  toolCalls?: number;
  wallMs?: number;
}

/**
 * What one model costs, in US dollars per million tokens. Cached input tokens (part of the
 * input) are priced at `cachedInputPerMTok` when given, cache writes at `cacheWritePerMTok`,
 * reasoning tokens (part of the output) at `reasoningPerMTok`; else at the plain rate.
 */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  cachedInputPerMTok?: number;
  cacheWritePerMTok?: number;
  reasoningPerMTok?: number;
}

/** Prices by model name (`ChatModel.model`). */
export type Prices = Readonly<Record<string, ModelPrice>>;

/** What a run spent besides its token counts (`usage`): kept in its checkpoint. */
export interface Spend {
  /** US dollars, when the model is priced. */
  costUsd: number;
  /** Tool calls started, a sub-agent's included. */
  toolCalls: number;
  /** Milliseconds spent driving the run before this process took it. */
  wallMs: number;
}

const LIMITS: readonly BudgetLimit[] = ['inputTokens', 'outputTokens', 'totalTokens', 'costUsd', 'toolCalls', 'wallMs'];

/** A budget checked: each limit a positive number; undefined when none is set. */
export function budgetOf(budget: Budget | undefined, where: string): Budget | undefined {
  if (budget === undefined) return undefined;
  if (typeof budget !== 'object' || budget === null) throw new InvalidArgumentError(`${where} must be an object`);
  const checked: Budget = {};
  for (const key of Object.keys(budget)) {
    if (!LIMITS.includes(key as BudgetLimit))
      throw new InvalidArgumentError(`${where}.${key} is not a budget limit (${LIMITS.join(', ')})`);
    const value = budget[key as BudgetLimit];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
      throw new InvalidArgumentError(`${where}.${key} must be a positive number, got ${String(value)}`);
    checked[key as BudgetLimit] = value;
  }
  return Object.keys(checked).length === 0 ? undefined : checked;
}

/** The tighter of two budgets, limit by limit. */
export function tighter(a: Budget | undefined, b: Budget | undefined): Budget | undefined {
  if (!a) return b;
  if (!b) return a;
  const out: Budget = { ...a };
  for (const key of LIMITS) {
    const value = b[key];
    if (value !== undefined) out[key] = Math.min(out[key] ?? Infinity, value);
  }
  return out;
}

/** The prices checked: every rate a number >= 0. */
export function pricesOf(prices: Prices | undefined): Prices | undefined {
  if (prices === undefined) return undefined;
  if (typeof prices !== 'object' || prices === null) throw new InvalidArgumentError('prices must be an object of model names');
  for (const [model, price] of Object.entries(prices)) {
    for (const key of ['inputPerMTok', 'outputPerMTok', 'cachedInputPerMTok', 'cacheWritePerMTok', 'reasoningPerMTok'] as const) {
      const rate = (price as Partial<ModelPrice> | undefined)?.[key];
      const required = key === 'inputPerMTok' || key === 'outputPerMTok';
      if (rate === undefined && !required) continue;
      if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0)
        throw new InvalidArgumentError(`prices[${JSON.stringify(model)}].${key} must be a number >= 0, got ${String(rate)}`);
    }
  }
  return prices;
}

/** The price of `model`, or undefined when it has none. */
export function priceOf(prices: Prices | undefined, model: ChatModel): ModelPrice | undefined {
  return model.model === undefined ? undefined : prices?.[model.model];
}

/** US dollars one call's counts cost at `price`. */
export function costOf(price: ModelPrice, usage: Usage): number {
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteInputTokens ?? 0;
  const reasoning = usage.reasoningTokens ?? 0;
  const plainInput = Math.max(0, usage.inputTokens - cached - written);
  const plainOutput = Math.max(0, usage.outputTokens - reasoning);
  return (
    (plainInput * price.inputPerMTok +
      cached * (price.cachedInputPerMTok ?? price.inputPerMTok) +
      written * (price.cacheWritePerMTok ?? price.inputPerMTok) +
      plainOutput * price.outputPerMTok +
      reasoning * (price.reasoningPerMTok ?? price.outputPerMTok)) /
    1_000_000
  );
}

/** What a run has spent of each limit. */
export interface Spent {
  readonly usage: Usage;
  readonly spend: Spend;
  /** Wall time driving it, this process's share included. */
  readonly wallMs: number;
}

function spentOf(limit: BudgetLimit, spent: Spent): number {
  switch (limit) {
    case 'inputTokens':
      return spent.usage.inputTokens;
    case 'outputTokens':
      return spent.usage.outputTokens;
    case 'totalTokens':
      return spent.usage.inputTokens + spent.usage.outputTokens;
    case 'costUsd':
      return spent.spend.costUsd;
    case 'toolCalls':
      return spent.spend.toolCalls;
    case 'wallMs':
      return spent.wallMs;
  }
}

/**
 * Whether the next model call would pass the budget: what is spent plus what the last call
 * spent (the next one's input is at least the last one's, as the transcript only grows),
 * against each token and cost limit; and whether the wall time is spent. Undefined: it may
 * be made.
 */
export function beforeModelCall(budget: Budget, spent: Spent, last: { usage?: Usage; costUsd: number }): RunStop | undefined {
  const lastUsage = last.usage;
  const next: Record<BudgetLimit, number> = {
    inputTokens: lastUsage?.inputTokens ?? 0,
    outputTokens: lastUsage?.outputTokens ?? 0,
    totalTokens: lastUsage ? lastUsage.inputTokens + lastUsage.outputTokens : 0,
    costUsd: last.costUsd,
    toolCalls: 0,
    wallMs: 0,
  };
  for (const limit of LIMITS) {
    const value = budget[limit];
    if (value === undefined || limit === 'toolCalls') continue;
    const used = spentOf(limit, spent);
    if (used >= value || used + next[limit] > value) return exceeded(limit, value, used);
  }
  return undefined;
}

/** Whether one more tool call would pass the budget's calls or its wall time. */
export function beforeToolCall(budget: Budget, spent: Spent): RunStop | undefined {
  if (budget.toolCalls !== undefined && spent.spend.toolCalls + 1 > budget.toolCalls)
    return exceeded('toolCalls', budget.toolCalls, spent.spend.toolCalls);
  if (budget.wallMs !== undefined && spent.wallMs >= budget.wallMs) return exceeded('wallMs', budget.wallMs, spent.wallMs);
  return undefined;
}

/**
 * A sub-agent's budget stop as its caller's: the same limit, with the caller's budget and
 * what the caller spent of it (the child's spending added).
 */
export function callersStop(budget: Budget | undefined, spent: Spent, child: RunStop & { status: 'budget_exceeded' }): RunStop {
  const value = budget?.[child.limit];
  return value === undefined ? child : exceeded(child.limit, value, spentOf(child.limit, spent));
}

/** What is left of each limit, for a sub-agent's run. */
export function remaining(budget: Budget, spent: Spent): Budget {
  const left: Budget = {};
  for (const limit of LIMITS) {
    const value = budget[limit];
    // A spent limit leaves the child the least it can be given: it stops at its first check.
    if (value !== undefined) left[limit] = Math.max(value - spentOf(limit, spent), Number.MIN_VALUE);
  }
  return left;
}

function exceeded(limit: BudgetLimit, budget: number, spent: number): RunStop {
  return { status: 'budget_exceeded', limit, budget, spent };
}

/**
 * A session's budget as one of its runs counts against it (kept in the run's checkpoint, so a
 * resume anywhere goes on counting): the limits, and what the session's ended runs spent
 * before this run began.
 */
export interface SessionBudget {
  budget: Budget;
  before: SessionSpending;
}

/** Nothing spent yet: a session no run of which has ended. */
export const NOTHING_SPENT: SessionSpending = { inputTokens: 0, outputTokens: 0, costUsd: 0, toolCalls: 0, wallMs: 0 };

/** What the session has spent with this run's spending so far added. */
export function sessionSpent(session: SessionBudget, run: Spent): Spent {
  const { before } = session;
  const wallMs = before.wallMs + run.wallMs;
  return {
    usage: { inputTokens: before.inputTokens + run.usage.inputTokens, outputTokens: before.outputTokens + run.usage.outputTokens },
    spend: { costUsd: before.costUsd + run.spend.costUsd, toolCalls: before.toolCalls + run.spend.toolCalls, wallMs },
    wallMs,
  };
}

/** A session's stop, said as the session's (`scope: 'session'`). */
export function asSessions(stop: RunStop | undefined): RunStop | undefined {
  return stop?.status === 'budget_exceeded' ? { ...stop, scope: 'session' } : stop;
}

/** A session's spending after a run that spent `usage` and `spend` (its tokens, and the rest when counted). */
export function addedSpending(before: SessionSpending | undefined, usage: Usage, spend: Spend | undefined): SessionSpending {
  const base = before ?? NOTHING_SPENT;
  return {
    inputTokens: base.inputTokens + usage.inputTokens,
    outputTokens: base.outputTokens + usage.outputTokens,
    costUsd: base.costUsd + (spend?.costUsd ?? 0),
    toolCalls: base.toolCalls + (spend?.toolCalls ?? 0),
    wallMs: base.wallMs + (spend?.wallMs ?? 0),
  };
}
