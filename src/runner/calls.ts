import { failure, pendingOf } from '../results/helpers';
import type { PendingRequest, ToolResult } from '../results/wire';
import type { ToolCall } from '../models/types';
import { SUB_AGENT_EVENTS } from './child-run';
import { callContext, RUN_BUDGET, type AgentParts, type LiveRun } from './live-run';
import { FINAL_ANSWER_TOOL } from './output';
import { ProgressReporter } from './progress';
import { mapLimited } from '../timing/limiter';
import { checkToolInput, showsToolResult } from './guardrails/stages';
import { leftForChild, spendOnTool } from './spending';
import { stoppedResult } from './stops';

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
export async function callTool(parts: AgentParts, live: LiveRun, call: ToolCall): Promise<ToolResult> {
  if (live.output && !live.output.native && call.name === FINAL_ANSWER_TOOL) {
    const result = failure(`call ${FINAL_ANSWER_TOOL} on its own, once every other tool result is in`);
    live.emit?.({ type: 'tool_result', callId: call.id, name: call.name, result });
    return result;
  }
  const spent = live.spend ? spendOnTool(parts, live) : undefined;
  if (spent) {
    const result = stoppedResult(spent, "not run: the run's budget is spent");
    live.emit?.({ type: 'tool_result', callId: call.id, name: call.name, result });
    return result;
  }
  const refused = parts.guardrails ? await checkToolInput(parts, live, call) : undefined;
  if (refused) {
    live.emit?.({ type: 'tool_result', callId: call.id, name: call.name, result: refused });
    return refused;
  }
  const ctx = callContext(live.context, live.signal, call.id, live.runId, live.principal);
  // A sub-agent this call runs may spend what is left of the run's budget, no more.
  const left = leftForChild(live);
  if (left) Object.assign(ctx, { [RUN_BUDGET]: left });
  const emit = live.emit;
  // A sub-agent's events join the stream of the run that called it.
  if (emit) Object.assign(ctx, { [SUB_AGENT_EVENTS]: emit });
  // Progress is reported only to someone listening; a host's own `progress` (an MCP client's) is kept.
  const progress =
    emit && ctx.progress === undefined ? new ProgressReporter(call.id, call.name, emit, parts.clock, parts.telemetry) : undefined;
  if (progress) ctx.progress = progress.report;
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
    // A held update goes out before the result; none after it.
    progress?.close();
  }
  const request = pendingOf(result);
  // A result the tool-output guardrails judge is shown once judged (checkToolOutputs), never before.
  if (request) live.emit?.({ type: 'pending', callId: call.id, request });
  else if (showsToolResult(parts)) live.emit?.({ type: 'tool_result', callId: call.id, name: call.name, result });
  // What the run keeps (its transcript, checkpoint and session) is bounded; the stream above showed it whole.
  return parts.coordinator.content.keep(result);
}
