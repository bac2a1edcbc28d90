import { failure, isToolResult, success } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import { onAbortOf, spreadContext, watchOf, type AbortWatch } from '../timing/abort-latch';
import { approvalStep } from './approval';
import { answerFor, type ToolContext } from './context';
import type { Entry } from './entry';
import type { ToolkitHooks } from './hooks';

/** What running a call needs of its Toolkit. */
export interface DispatchSettings {
  readonly hooks?: ToolkitHooks;
  readonly defaultTimeoutMs?: number;
}

/**
 * Runs validated arguments through a tool, in the order docs/design.md ("Dispatch") gives:
 * the caller's cancellation, the declared approval, `beforeTool`, then `run` under the
 * deadline and the signal.
 */
export async function dispatch(
  settings: DispatchSettings,
  entry: Entry,
  args: object,
  given: ToolContext | undefined,
): Promise<ToolResult> {
  if (watchOf(given)?.aborted) return failure(`${entry.name} cancelled`);
  let ctx = given;
  if (entry.approval) {
    const step = await approvalStep(entry.name, entry.approval, args, ctx);
    if ('result' in step) return step.result;
    ctx = step.run;
  } else if (ctx?.replay) {
    // A tool that asked for its own approval sees it as a declared one is seen, signers and all.
    // The copy keeps a replay's lazy signal lazy (an AbortSignal costs ~5 µs on Node 20).
    const approval = answerFor(ctx, 'approval');
    if (approval) ctx = spreadContext(ctx, { approval });
  }
  // Awaited only when there is a hook: an await of nothing still costs a microtask.
  const { hooks } = settings;
  const guard = hooks?.beforeTool ? await hooks.beforeTool({ name: entry.name, args, ctx }) : undefined;
  if (guard)
    return isToolResult(guard.result)
      ? guard.result
      : failure(`the beforeTool hook of ${entry.name} returned { result } without a ToolResult`);
  const timeoutMs = deadlineMs(ctx?.timeout ?? entry.timeoutMs ?? settings.defaultTimeoutMs);
  const watch = watchOf(ctx);
  const start = (): Promise<ToolResult> =>
    timeoutMs === undefined && watch === undefined ? invoke(entry, args, ctx) : guarded(entry, args, ctx, timeoutMs, watch);
  if (entry.limiter === undefined) return start();
  // Waiting for a turn is not the call's time: its timeout starts when it runs. A call
  // cancelled while it waited never runs.
  return entry.limiter.run(() => (ctx?.signal?.aborted ? Promise.resolve(failure(`${entry.name} cancelled`)) : start()));
}

/**
 * Races `run` against its deadline and the caller's cancellation. One AbortController per
 * call carries both to `run`; the listener on the caller's (possibly long-lived) signal and
 * the timer are removed in `finally`, so nothing is retained per call (unlike
 * `AbortSignal.any` on Node 20, whose sources keep every combined signal).
 */
async function guarded(
  entry: Entry,
  args: object,
  ctx: ToolContext | undefined,
  timeoutMs: number | undefined,
  watch: AbortWatch | undefined,
): Promise<ToolResult> {
  let callCtx = ctx;
  let timer: NodeJS.Timeout | undefined;
  let unwatch: (() => void) | undefined;
  const stops: Array<Promise<ToolResult>> = [];
  const call = timeoutMs === undefined ? undefined : new AbortController();
  if (call) {
    callCtx = { ...ctx, signal: call.signal, timeout: timeoutMs };
    stops.push(
      new Promise((resolve) => {
        timer = setTimeout(() => {
          call.abort(new Error(`${entry.name} timed out after ${timeoutMs} ms`));
          resolve(failure(`${entry.name} timed out after ${timeoutMs} ms`));
        }, timeoutMs);
      }),
    );
  }
  if (watch) {
    stops.push(
      new Promise((resolve) => {
        unwatch = onAbortOf(watch, (reason) => {
          call?.abort(reason);
          resolve(failure(`${entry.name} cancelled`));
        });
      }),
    );
  }
  try {
    return await Promise.race([invoke(entry, args, callCtx), ...stops]);
  } finally {
    if (timer) clearTimeout(timer);
    unwatch?.();
  }
}

async function invoke(entry: Entry, args: object, ctx: ToolContext | undefined): Promise<ToolResult> {
  const ran: unknown = ctx === undefined ? entry.instance.run(args) : entry.instance.run(args, ctx);
  // A synchronous tool's value is taken as it is: awaiting it would only cost a microtask.
  return toResult(isThenable(ran) ? await ran : ran);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

/** What `run` returned, as a ToolResult. */
export function toResult(value: unknown): ToolResult {
  if (isToolResult(value)) return value;
  if (value === undefined) return success('');
  return success(value);
}

/** The longest delay `setTimeout` honours (2^31 − 1 ms, about 24.8 days); a longer one fires after 1 ms. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * The deadline a call gets from a configured timeout: `undefined` and `Infinity` mean none;
 * anything longer than {@link MAX_TIMEOUT_MS} is clamped to it (a timer cannot wait longer).
 */
function deadlineMs(timeoutMs: number | undefined): number | undefined {
  if (timeoutMs === undefined || timeoutMs === Number.POSITIVE_INFINITY) return undefined;
  return timeoutMs > MAX_TIMEOUT_MS ? MAX_TIMEOUT_MS : timeoutMs;
}
