import { failure, pendingOf } from '../../results/helpers';
import type { PendingRequest, ToolResult } from '../../results/wire';
import type { ToolCall } from '../../models/types';
import { callContext, type AgentParts, type LiveRun } from './live-run';
import type { RunStop } from './types';
import { FINAL_ANSWER_TOOL } from './output';
import { mapLimited } from '../../timing/limiter';
import { showsToolResult } from './guardrails/stages';

/**
 * How a run's turns run their calls, chosen once per run by its durability: {@link PLAIN_CALLS},
 * or durable steps (`DurableSteps`), which record the turn before any call runs and each
 * call's start and result as they come.
 */
export interface TurnCalls {
  /** The model asked for `calls` (at least one) in turn `turn`: recorded here before anything else happens. */
  record?(turn: number, calls: readonly ToolCall[]): Promise<void>;
  /** Runs the turn's calls in parallel (at most `maxParallelTools` at once); their results in call order. */
  run(parts: AgentParts, live: LiveRun, calls: readonly ToolCall[]): Promise<ToolResult[]>;
}

/** Calls run in parallel, nothing recorded until the run halts or ends. */
export const PLAIN_CALLS: TurnCalls = {
  run: (parts, live, calls) => mapLimited(calls, parts.maxParallelTools, (call) => callTool(parts, live, call)),
};

/**
 * One call, on the one path every call takes: the model's raw arguments go to the
 * coordinator, which runs them through the toolkit (parsing, validation, hooks, metrics)
 * and answers inline or records the suspension. Never rejects for the model's or the
 * tool's doing (only for a store that cannot record).
 */
export async function callTool(parts: AgentParts, live: LiveRun, call: ToolCall, onStop?: (stop: RunStop) => void): Promise<ToolResult> {
  if (live.output && !live.output.native && call.name === FINAL_ANSWER_TOOL) {
    const result = failure(`call ${FINAL_ANSWER_TOOL} on its own, once every other tool result is in`);
    if (showsToolResult(parts)) live.emit?.({ type: 'tool_result', callId: call.id, name: call.name, result });
    return result;
  }
  let refused = parts.features.beforeTool(live, call);
  if (refused instanceof Promise) refused = await refused;
  if (refused) {
    // The run stops once the turn's calls are in (the first stop made wins).
    if (refused.stop) {
      live.stop ??= refused.stop;
      onStop?.(refused.stop);
    }
    if (showsToolResult(parts)) live.emit?.({ type: 'tool_result', callId: call.id, name: call.name, result: refused.result });
    return refused.result;
  }
  const ctx = callContext(live.context, live.signal, call.id, live.runId, live.principal);
  const emit = live.emit;
  const close = parts.features.toolContext(live, call, ctx);
  let result: ToolResult;
  try {
    result = await parts.coordinator.execute(call.name, call.arguments, ctx, {
      callId: call.id,
      runId: live.runId,
      principal: live.principal,
      session: live.session,
      waitFor: parts.waitFor,
      // Inline answers are announced before `waitFor` runs, so a channel can push the link at once.
      onPending: emit ? (request: PendingRequest) => emit({ type: 'pending', callId: call.id, request }) : undefined,
    });
  } finally {
    close?.();
  }
  const request = pendingOf(result);
  // A result the tool-output guardrails judge is shown once judged (checkToolOutputs), never before.
  if (request) live.emit?.({ type: 'pending', callId: call.id, request });
  else if (showsToolResult(parts)) live.emit?.({ type: 'tool_result', callId: call.id, name: call.name, result });
  // What the run keeps (its transcript, checkpoint and session) is bounded; the stream above showed it whole.
  return parts.coordinator.content.keep(result);
}
