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
