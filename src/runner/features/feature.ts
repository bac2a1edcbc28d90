import type { ToolCall, Usage } from '../../models/types';
import type { ToolResult } from '../../results/wire';
import type { AgentToolContext, LiveRun } from '../live-run';
import type { RunState } from '../state';
import type { RunStop } from '../types';

/**
 * One optional piece of a run (a budget, progress, cancel) as the hooks the loop calls at its
 * fixed points, so the loop names no feature: the runner composes its features once, when it is
 * built ({@link RunFeatures}), and a hook nobody defines costs nothing. Like the AI SDK's
 * `stopWhen` conditions and `prepareStep`: a stop is a value a hook returns, never a branch in
 * the loop. Every hook is optional; one that has nothing to say returns undefined.
 */
export interface RunFeature {
  /** Its name, for a reader of the composed list. */
  readonly name: string;
  /** This process begins driving the run: a new one, or one from its checkpoint (`kept`), whose state it restores. */
  start?(live: LiveRun, kept: RunState | undefined): void;
  /** Before each model call of a run that may still make one: a stop ends the run there, before any request. */
  beforeModel?(live: LiveRun): RunStop | undefined;
  /** A model call answered, with what it used. */
  afterModel?(live: LiveRun, usage: Usage): void;
  /** A tool call is about to run: a result here is its result instead (the call does not run; a stop's says so). */
  beforeTool?(live: LiveRun, call: ToolCall): ToolResult | undefined;
  /**
   * What the call's context carries for this feature, set on `ctx` before the call runs; the
   * function it returns, if any, is called once the call ended (before its result is told).
   */
  toolContext?(live: LiveRun, call: ToolCall, ctx: AgentToolContext): (() => void) | undefined;
  /** A call's result is fed to the transcript. */
  afterTool?(live: LiveRun, result: ToolResult): void;
  /** Once a turn's calls are in: a stop ends the run there. */
  afterTools?(live: LiveRun): RunStop | undefined;
  /** The run stops with `stop` (a turn's calls brought it): the stop as this run tells it. */
  onStop?(live: LiveRun, stop: RunStop): RunStop;
}

/**
 * The runner's features composed once: one list per hook, holding only the features that
 * define it, in the order given. Each method runs its list in order; the first stop wins.
 */
export class RunFeatures {
  private readonly starts: Array<NonNullable<RunFeature['start']>>;
  private readonly beforeModels: Array<NonNullable<RunFeature['beforeModel']>>;
  private readonly afterModels: Array<NonNullable<RunFeature['afterModel']>>;
  private readonly beforeTools: Array<NonNullable<RunFeature['beforeTool']>>;
  private readonly toolContexts: Array<NonNullable<RunFeature['toolContext']>>;
  private readonly afterToolsOne: Array<NonNullable<RunFeature['afterTool']>>;
  private readonly afterToolsAll: Array<NonNullable<RunFeature['afterTools']>>;
  private readonly onStops: Array<NonNullable<RunFeature['onStop']>>;

  constructor(readonly features: readonly RunFeature[]) {
    const hooks = <K extends keyof RunFeature>(key: K): Array<NonNullable<RunFeature[K]>> =>
      features.flatMap((feature) => {
        const hook = feature[key];
        return typeof hook === 'function' ? [hook.bind(feature) as NonNullable<RunFeature[K]>] : [];
      });
    this.starts = hooks('start');
    this.beforeModels = hooks('beforeModel');
    this.afterModels = hooks('afterModel');
    this.beforeTools = hooks('beforeTool');
    this.toolContexts = hooks('toolContext');
    this.afterToolsOne = hooks('afterTool');
    this.afterToolsAll = hooks('afterTools');
    this.onStops = hooks('onStop');
  }

  start(live: LiveRun, kept: RunState | undefined): void {
    for (const hook of this.starts) hook(live, kept);
  }

  beforeModel(live: LiveRun): RunStop | undefined {
    for (const hook of this.beforeModels) {
      const stop = hook(live);
      if (stop) return stop;
    }
    return undefined;
  }

  afterModel(live: LiveRun, usage: Usage): void {
    for (const hook of this.afterModels) hook(live, usage);
  }

  beforeTool(live: LiveRun, call: ToolCall): ToolResult | undefined {
    for (const hook of this.beforeTools) {
      const refusal = hook(live, call);
      if (refusal) return refusal;
    }
    return undefined;
  }

  /** Sets each feature's part of the call's context; undefined when nothing is to be closed after the call. */
  toolContext(live: LiveRun, call: ToolCall, ctx: AgentToolContext): (() => void) | undefined {
    let closers: Array<() => void> | undefined;
    for (const hook of this.toolContexts) {
      const close = hook(live, call, ctx);
      if (close) (closers ??= []).push(close);
    }
    if (!closers) return undefined;
    const all = closers;
    return () => {
      for (const close of all) close();
    };
  }

  afterTool(live: LiveRun, result: ToolResult): void {
    for (const hook of this.afterToolsOne) hook(live, result);
  }

  afterTools(live: LiveRun): RunStop | undefined {
    for (const hook of this.afterToolsAll) {
      const stop = hook(live);
      if (stop) return stop;
    }
    return undefined;
  }

  onStop(live: LiveRun, stop: RunStop): RunStop {
    let told = stop;
    for (const hook of this.onStops) told = hook(live, told);
    return told;
  }
}
