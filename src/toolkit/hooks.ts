import { messageOf } from '../errors/message';
import { failure, isToolResult, pendingOf } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import type { ToolContext } from './context';

/** What `beforeTool` sees: the validated arguments, about to reach `run`. */
export interface BeforeToolEvent {
  name: string;
  args: object;
  ctx: ToolContext | undefined;
}

/** What `afterTool` sees once a call has a result. */
export interface AfterToolEvent {
  name: string;
  args: unknown;
  result: ToolResult;
  ms: number;
}

/** One event per `execute`. A suspension counts as `pending`, never as an error. */
export interface ToolMetricEvent {
  event: 'tool';
  tool: string;
  isError: boolean;
  pending: boolean;
  ms: number;
}

/** Optional interception points of a Toolkit. */
export interface ToolkitHooks {
  /** Return `{ result }` to skip `run` (a guard may return `pending(...)` to demand approval). */
  beforeTool?(event: BeforeToolEvent): { result: ToolResult } | void | undefined | Promise<{ result: ToolResult } | void | undefined>;
  /** Return a result to replace the call's result. */
  afterTool?(event: AfterToolEvent): ToolResult | void | undefined | Promise<ToolResult | void | undefined>;
  /** Called once per call, after `afterTool`. */
  onMetric?(event: ToolMetricEvent): void;
}

/**
 * A finished call as the hooks see it: `afterTool` may replace its result, then `onMetric` is
 * told; neither can make the call reject. `started` is when the call began (`performance.now()`).
 */
export async function afterCall(
  hooks: ToolkitHooks,
  name: string,
  args: unknown,
  result: ToolResult,
  started: number,
): Promise<ToolResult> {
  let final = result;
  if (hooks.afterTool) {
    try {
      const replaced: unknown = await hooks.afterTool({ name, args, result, ms: performance.now() - started });
      if (replaced !== undefined && replaced !== null)
        final = isToolResult(replaced) ? replaced : failure(`the afterTool hook of ${name} returned something that is not a ToolResult`);
    } catch (error) {
      final = failure(messageOf(error));
    }
  }
  if (hooks.onMetric) {
    // A metric sink that throws must not change (or reject) the call's result.
    try {
      const isPending = pendingOf(final) !== undefined;
      hooks.onMetric({
        event: 'tool',
        tool: name,
        isError: final.isError && !isPending,
        pending: isPending,
        ms: performance.now() - started,
      });
    } catch {
      // dropped: the result stands
    }
  }
  return final;
}
