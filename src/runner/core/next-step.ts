import { toolMessage } from './media';
import { pendingOf } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import type { RefusalStatus } from '../../suspension/answers';
import type { ToolCall } from '../../models/types';
import { callStatus } from './call-status';
import { settleStopped } from './guardrails/stages';
import type { AgentParts, LiveRun } from './live-run';
import type { RunStop } from './types';

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
 * Where a turn's settled calls take the run: it stops when a feature made a stop (a call it
 * refused, a cancel, a sub-agent stopped), halts on a suspended call, else the results are fed
 * back. A promise only when a feature must be waited for (the plain loop takes no microtask here).
 */
export function nextStepOf(
  parts: AgentParts,
  live: LiveRun,
  calls: ToolCall[],
  results: ToolResult[],
  turn: number,
): NextStep | Promise<NextStep> {
  // The run stops, and the calls still waiting for answers are cancelled.
  const found = live.stop ?? parts.features.afterTools(live, calls, results);
  if (found) return stoppedBy(parts, live, calls, results, turn, found);
  if (results.some((result) => pendingOf(result) !== undefined)) return { type: 'halt', calls, results };
  return fedChecked(parts, live, calls, results, turn);
}

/** A feature's stop ends the run once the turn's calls are in: those still waiting are cancelled. */
async function stoppedBy(
  parts: AgentParts,
  live: LiveRun,
  calls: ToolCall[],
  results: ToolResult[],
  turn: number,
  found: RunStop,
): Promise<NextStep> {
  live.stop = undefined;
  // The calls that did run are judged too: what a run keeps, a later run's model reads.
  const judged = (await parts.features.checkResults(live, calls, results))?.results ?? results;
  feed(parts, live, calls, await settleStopped(parts, judged, found), turn);
  return { type: 'stop', stop: parts.features.onStop(live, found) };
}

/**
 * The results go past the features that check them (the tool-output guardrails), then are fed
 * back: the run stops when one blocks; a handoff among them gives the next turn to its agent.
 * A promise only when a feature checks them.
 */
export function fedChecked(
  parts: AgentParts,
  live: LiveRun,
  calls: readonly ToolCall[],
  results: readonly ToolResult[],
  turn: number,
  refusals?: ReadonlyArray<RefusalStatus | undefined>,
): NextStep | Promise<NextStep> {
  const checking = parts.features.checkResults(live, calls, results);
  if (checking)
    return checking.then((checked) => {
      feed(parts, live, calls, checked.results, turn, refusals);
      return checked.stop ? { type: 'stop', stop: checked.stop } : handedOn(parts, live);
    });
  feed(parts, live, calls, results, turn, refusals);
  return handedOn(parts, live);
}

/** Another round, of the agent that now holds the conversation when a result handed it on. */
function handedOn(parts: AgentParts, live: LiveRun): NextStep {
  return live.agent === undefined || live.agent === parts.agent ? AGAIN : { type: 'handoff', agent: live.agent };
}

/**
 * Appends one tool result per call, in call order, and records the calls; `refusals[i]`,
 * where known, is how call `i`'s answer refused it. The features see each result (a sub-agent's
 * usage, its spending, a handoff that moves the conversation).
 */
function feed(
  parts: AgentParts,
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
    parts.features.afterTool(live, result);
    live.toolCalls.push({ id: call.id, name: call.name, arguments: call.arguments, result, status: callStatus(result, refusals[i]), turn });
  }
}
