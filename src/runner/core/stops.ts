import { failure } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import type { RunStop } from './types';

/**
 * A feature's refusal of a tool call about to run: the result the call gets instead, and, when
 * the refusal ends the run (a guardrail's block, a spent budget), the stop, as a value beside
 * the result (the loop takes it from there; the result carries nothing of it).
 */
export interface CallRefusal {
  readonly result: ToolResult;
  readonly stop?: RunStop;
}

/** The refusal of a call that is not run because the run stops: a failure saying `output`, and the stop. */
export function stoppingRefusal(stop: RunStop, output: string): CallRefusal {
  return { result: failure(output), stop };
}
