import { toolMessage } from './media';
import { pendingOf } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import type { RefusalStatus } from '../suspension/answers';
import type { ToolCall } from '../models/types';
import { callStatus } from './call-status';
import { addChildSpend, subAgentStop, subAgentUsage } from './child-run';
import { checkToolOutputs, settleStopped } from './guardrails/stages';
import { stopOfResult } from './stops';
import { cancelStopOf } from './cancel';
import { callersBudgetStop } from './spending';
import { handoffOf } from './handoff';
import type { AgentParts, LiveRun } from './live-run';
import type { RunStop } from './types';
import { addUsage } from './usage';

/**
 * What a turn leaves the loop to do, which the loop applies: `final` (the model answered:
 * the run is done), `again` (ask the model again), `handoff` (ask again, of the agent that now
 * holds the conversation), `halt` (some calls are suspended: checkpoint and stop), or
 * `incomplete` (the turn limit is reached), or `stop` (a guardrail, the budget or a cancel ended it).
 */
export type NextStep =
  | { readonly type: 'final' }
  | { readonly type: 'again' }
  | { readonly type: 'handoff'; readonly agent: string }
  | { readonly type: 'halt'; readonly calls: ToolCall[]; readonly results: ToolResult[] }
  | { readonly type: 'incomplete' }
  | { readonly type: 'stop'; readonly stop: RunStop };

export const FINAL: NextStep = { type: 'final' };
export const AGAIN: NextStep = { type: 'again' };
export const INCOMPLETE: NextStep = { type: 'incomplete' };

/**
 * Where a turn's settled calls take the run: it stops when a guardrail blocked one (or a
 * sub-agent was stopped so), halts on a suspended one, else their results are fed back.
 */
export async function nextStepOf(
  parts: AgentParts,
  live: LiveRun,
  calls: ToolCall[],
  results: ToolResult[],
  turn: number,
): Promise<NextStep> {
  // A cancel while the calls ran: the run stops, and the calls still waiting for answers are cancelled.
  const found = stopIn(calls, results, live) ?? cancelStopOf(live.signal);
  if (found) {
    // The calls that did run are judged too: what a run keeps, a later run's model reads.
    const judged = parts.guardrails ? (await checkToolOutputs(parts, live, calls, results)).results : results;
    feed(live, calls, await settleStopped(parts, judged, found), turn);
    // A sub-agent that spent the budget spent the caller's: its own figures, its spending added.
    const stop = found.status === 'budget_exceeded' ? callersBudgetStop(live, found) : found;
    return { type: 'stop', stop };
  }
  if (results.some((result) => pendingOf(result) !== undefined)) return { type: 'halt', calls, results };
  return fedChecked(parts, live, calls, results, turn);
}

/**
 * A stop a turn's results carry: a call not run because the run stops (a guardrail's block, a
 * spent budget), or a sub-agent's run that a guardrail blocked or that spent a limit of the
 * caller's budget (passed down). A cancelled sub-agent is its call's failure, not the caller's stop.
 */
function stopIn(calls: readonly ToolCall[], results: readonly ToolResult[], live: LiveRun): RunStop | undefined {
  for (let i = 0; i < results.length; i++) {
    const result = results[i] as ToolResult;
    const stop = stopOfResult(result);
    if (stop) return stop;
    const child = subAgentStop(result);
    if (child?.status === 'blocked') return { ...child, path: [(calls[i] as ToolCall).name, ...(child.path ?? [])] };
    // Only a limit the caller set is the caller's: a child's own tighter budget is its call's failure.
    if (child?.status === 'budget_exceeded' && (live.budget?.[child.limit] ?? live.sessionBudget?.budget[child.limit]) !== undefined)
      return child;
  }
  return undefined;
}

/** The results go past the tool-output guardrails, then are fed back (or the run stops, when one blocks). */
export async function fedChecked(
  parts: AgentParts,
  live: LiveRun,
  calls: readonly ToolCall[],
  results: readonly ToolResult[],
  turn: number,
  refusals?: ReadonlyArray<RefusalStatus | undefined>,
): Promise<NextStep> {
  if (!parts.guardrails) return fed(parts, live, calls, results, turn, refusals);
  const checked = await checkToolOutputs(parts, live, calls, results);
  if (checked.stop) {
    feed(live, calls, checked.results, turn, refusals);
    return { type: 'stop', stop: checked.stop };
  }
  return fed(parts, live, calls, checked.results, turn, refusals);
}

/** Feeds the results back; a handoff among them gives the next turn to its agent. */
export function fed(
  parts: AgentParts,
  live: LiveRun,
  calls: readonly ToolCall[],
  results: readonly ToolResult[],
  turn: number,
  refusals?: ReadonlyArray<RefusalStatus | undefined>,
): NextStep {
  feed(live, calls, results, turn, refusals);
  return live.agent === undefined || live.agent === parts.agent ? AGAIN : { type: 'handoff', agent: live.agent };
}

/**
 * Appends one tool result per call, in call order, and records the calls; `refusals[i]`,
 * where known, is how call `i`'s answer refused it. A sub-agent's usage is added to the
 * run's; a handoff moves the conversation (`live.agent`, which the checkpoint keeps).
 */
function feed(
  live: LiveRun,
  calls: readonly ToolCall[],
  results: readonly ToolResult[],
  turn: number,
  refusals: ReadonlyArray<RefusalStatus | undefined> = [],
): void {
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as ToolCall;
    const result = results[i] as ToolResult;
    live.messages.push(toolMessage(call, result));
    const childUsage = subAgentUsage(result);
    if (childUsage) addUsage(live.usage, childUsage);
    if (live.spend) addChildSpend(live.spend, result);
    const to = handoffOf(result);
    if (to !== undefined) live.agent = to;
    live.toolCalls.push({ id: call.id, name: call.name, arguments: call.arguments, result, status: callStatus(result, refusals[i]), turn });
  }
}
