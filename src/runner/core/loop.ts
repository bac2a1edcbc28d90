import { RunCheckpointError } from '../../errors';
import { systemAudit } from '../../suspension/authority';
import { messageOf } from '../../errors/message';
import { pendingOf } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import type { ToolCall } from '../../models/types';
import type { TurnCalls } from './calls';
import { pendingResult } from './checkpoints';
import { snapshot, spendSoFar, type AgentParts, type LiveRun } from './live-run';
import { AGAIN, type NextStep } from './next-step';
import { offeredTools } from './output';
import type { HaltedCall } from './state';
import { turn } from './turn';
import { cancelledElsewhere, cancelStopOf } from './cancel';
import type { RunResult, RunStop } from './types';

/**
 * The turn loop: ask the model, run every tool call of the turn in parallel, feed the
 * results back in call order, and repeat until the model answers, a limit is reached, or a
 * call suspends with no one to answer it inline (the run halts, checkpointed). Each turn
 * says what comes next ({@link NextStep}); this applies it. `next` is where a resumed run
 * stands when the loop takes it (its halted or interrupted turn finished).
 */
export async function runLoop(first: AgentParts, live: LiveRun, calls: TurnCalls, next: NextStep = AGAIN): Promise<RunResult> {
  try {
    return await loop(first, live, calls, next);
  } catch (error) {
    // Another process cancelled it through the checkpoint (this one lost a write): that is how it ended, not an error.
    const cancelled = await cancelledElsewhere(first, live, error);
    if (cancelled) return cancelled;
    throw error;
  }
}

async function loop(first: AgentParts, live: LiveRun, calls: TurnCalls, start: NextStep): Promise<RunResult> {
  let parts = first;
  // Each step as the features see it (steering turns a final answer into another round for a message that waited).
  // (awaited only when a feature's hook gave a promise: each await is a microtask, and the plain loop takes none it need not)
  let stepped = parts.features.next(live, start);
  let next = stepped instanceof Promise ? await stepped : stepped;
  try {
    while (next.type === 'again' || next.type === 'handoff') {
      if (next.type === 'handoff') parts = handedTo(parts, live, next.agent);
      stepped = parts.features.next(live, await turn(parts, live, calls));
      next = stepped instanceof Promise ? await stepped : stepped;
    }
  } catch (error) {
    // A cancel aborted the model call: the run ends cancelled, not failed.
    const cancelled = cancelStopOf(live.latch);
    if (cancelled) return stopped(parts, live, cancelled);
    // Whatever stopped the run (a model or store failure, a takeover): this process no longer drives it.
    await live.lease?.stop();
    throw error;
  }
  // Each of these stops the lease before its own last write.
  if (next.type === 'halt') return halt(parts, live, next.calls, next.results);
  if (next.type === 'stop') return stopped(parts, live, next.stop);
  return end(parts, live, next.type === 'final' ? 'done' : 'incomplete');
}

/**
 * The parts of the agent the conversation was handed to: its model, instructions and tools
 * (the tools offered change with it).
 */
function handedTo(parts: AgentParts, live: LiveRun, agent: string): AgentParts {
  const next = parts.agentParts?.(agent);
  if (!next)
    throw new RunCheckpointError(live.runId, `the conversation is held by agent ${JSON.stringify(agent)}, which this runner cannot reach`);
  live.tools = offeredTools(next.tools(), live.output);
  return next;
}

/** Every call of the turn has finished; the suspended ones are recorded. Checkpoint and stop. */
async function halt(parts: AgentParts, live: LiveRun, calls: ToolCall[], results: ToolResult[]): Promise<RunResult> {
  const halted: HaltedCall[] = calls.map((call, i) => {
    const result = results[i] as ToolResult;
    const request = pendingOf(result);
    return request ? { call, result, pendingId: request.id } : { call, result };
  });
  const state = snapshot(live, 'halted', { turn: live.turns, calls: halted });
  await live.lease?.stop();
  try {
    await parts.checkpoints.save(live, state);
  } catch (error) {
    // No checkpoint means no run could ever continue these: cancel them rather than leave orphans.
    await Promise.allSettled(
      halted
        .filter((entry) => entry.pendingId)
        .map((entry) => parts.coordinator.cancel(entry.pendingId as string, messageOf(error), systemAudit())),
    );
    throw error;
  }
  const result = pendingResult(live.runId, state);
  live.emit?.({ type: 'done', result });
  return result;
}

/** A guardrail, the budget or a cancel ended the run: its own status, kept in the checkpoint, never continued. */
async function stopped(parts: AgentParts, live: LiveRun, stop: RunStop): Promise<RunResult> {
  await live.lease?.stop();
  // A cancelled run is checkpointed even if it never was: whoever cancelled it (a chat's stop) reads there how it ended.
  if (live.version > 0 || stop.status === 'cancelled') {
    const state = snapshot(live, stop.status, undefined);
    state.stop = stop;
    await parts.checkpoints.save(live, state);
  }
  const { text, messages, toolCalls, turns, usage, turnUsage, runId } = live;
  const result: RunResult = { text, messages, toolCalls, turns, usage, turnUsage, runId, status: stop.status, stop };
  if (live.guardrails) result.guardrails = live.guardrails;
  if (live.spend) result.spend = spendSoFar(live);
  live.emit?.({ type: 'done', result });
  return result;
}

async function end(parts: AgentParts, live: LiveRun, status: 'done' | 'incomplete'): Promise<RunResult> {
  await live.lease?.stop();
  // A run that was never checkpointed stays out of the store: the common case costs no I/O.
  if (live.version > 0) await parts.checkpoints.save(live, snapshot(live, status, undefined));
  // Two literals rather than one spread of a shared base: V8 copies a spread object and then
  // adds the rest one by one, which was the single costliest line of a run (docs/performance.md).
  const { text, messages, toolCalls, turns, usage, turnUsage, runId } = live;
  const result: RunResult =
    status === 'incomplete'
      ? { text, messages, toolCalls, turns, usage, turnUsage, runId, status, limit: 'maxTurns' }
      : { text, messages, toolCalls, turns, usage, turnUsage, runId, status, output: live.output?.value?.instance };
  if (live.guardrails) result.guardrails = live.guardrails;
  if (live.spend) result.spend = spendSoFar(live);
  live.emit?.({ type: 'done', result });
  return result;
}
