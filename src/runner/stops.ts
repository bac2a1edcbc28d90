import { failure } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import type { RunStop } from './types';

/** Where a call that was not run says why the run stopped, for the turn that fed it. */
const STOP_KEY = 'runStop';

/** The result of a call that never ran because the run stops (a guardrail's block, a spent budget). */
export function stoppedResult(stop: RunStop, output: string): ToolResult {
  return failure(output, { [STOP_KEY]: stop });
}

/** The stop a call's result carries, when the call was not run because the run stops. */
export function stopOfResult(result: ToolResult): RunStop | undefined {
  const stop = result.metadata?.[STOP_KEY] as RunStop | undefined;
  return typeof stop === 'object' && stop !== null && typeof stop.status === 'string' ? stop : undefined;
}
