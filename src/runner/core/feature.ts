import type { ModelResponse, ToolCall, Usage } from '../../models/types';
import type { ToolResult } from '../../results/wire';
import type { AgentToolContext, Emit, LiveRun } from './live-run';
import type { NextStep } from './next-step';
import type { RunState } from './state';
import type { CallRefusal } from './stops';
import type { RunStop } from './types';

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
  /** Before a new run's first turn: a stop ends it there, before any model call. */
  beforeRun?(live: LiveRun): Promise<RunStop | undefined> | undefined;
  /** Before each model call of a run that may still make one: a stop ends the run there, before any request. */
  beforeModel?(live: LiveRun): RunStop | undefined;
  /**
   * At a turn's start, once it will ask the model (after {@link beforeModel}): what the turn
   * adds to the transcript before it (steered messages) and checks of it; a stop ends the run
   * there. Undefined: nothing to wait for (the common case costs no promise).
   */
  beforeTurn?(live: LiveRun): Promise<RunStop | undefined> | undefined;
  /**
   * What the loop does after a turn (or first, for a resumed run): `next` as the turn said, or
   * another round instead of the run's end (a message steered in while the model answered).
   * A promise only when the hook must read something first (a store's steering queue).
   */
  next?(live: LiveRun, next: NextStep): NextStep | Promise<NextStep>;
  /** A model call answered, with what it used. */
  afterModel?(live: LiveRun, usage: Usage): void;
  /**
   * A model call is about to be made: what watches its turn, its streamed deltas (`emit`, where
   * they go instead of the run's stream: a hold-back) and then its answer (`judge`: another
   * round or a stop; undefined, it passed). At most one feature's `emit` is used: the first.
   */
  watchTurn?(live: LiveRun): TurnWatch | undefined;
  /** A tool call is about to run: a refusal is its result instead (the call does not run), and the run's stop when it ends the run. */
  beforeTool?(live: LiveRun, call: ToolCall): CallRefusal | undefined | Promise<CallRefusal | undefined>;
  /**
   * What the call's context carries for this feature, set on `ctx` before the call runs; the
   * function it returns, if any, is called once the call ended (before its result is told).
   */
  toolContext?(live: LiveRun, call: ToolCall, ctx: AgentToolContext): (() => void) | undefined;
  /** A call's result is fed to the transcript. */
  afterTool?(live: LiveRun, result: ToolResult): void;
  /** Once a turn's calls are in, with their results in call order: a stop ends the run there. */
  afterTools?(live: LiveRun, calls: readonly ToolCall[], results: readonly ToolResult[]): RunStop | undefined;
  /** A turn's settled results, before the model sees them: as they go on (each may be replaced), or with the stop they make. */
  checkResults?(live: LiveRun, calls: readonly ToolCall[], results: readonly ToolResult[]): Promise<CheckedResults>;
  /** The run stops with `stop` (a turn's calls brought it): the stop as this run tells it. */
  onStop?(live: LiveRun, stop: RunStop): RunStop;
}

/** What watches one turn (see {@link RunFeature.watchTurn}). */
export interface TurnWatch {
  readonly emit?: Emit;
  judge(response: ModelResponse): Promise<NextStep | undefined>;
}

/** A turn's results as a feature passed them on, and the stop they make, if any. */
export interface CheckedResults {
  results: ToolResult[];
  stop?: RunStop;
}

/** A hook of {@link RunFeature}: every member but its name. */
type HookName = Exclude<keyof RunFeature, 'name'>;

/** Each hook, the features' own functions for it in order. */
type HookLists = { readonly [K in HookName]: ReadonlyArray<NonNullable<RunFeature[K]>> };

/** The hooks {@link RunFeatures} composes: every one, as the type insists. */
const HOOKS: Readonly<Record<HookName, true>> = {
  start: true,
  beforeRun: true,
  beforeModel: true,
  beforeTurn: true,
  next: true,
  afterModel: true,
  watchTurn: true,
  beforeTool: true,
  toolContext: true,
  afterTool: true,
  afterTools: true,
  checkResults: true,
  onStop: true,
};

/**
 * The runner's features composed once: one list per hook, holding only the features that
 * define it, in the order given. Each method runs its list in order; the first stop wins.
 */
export class RunFeatures {
  private readonly hooks: HookLists;

  constructor(readonly features: readonly RunFeature[]) {
    const hooks = <K extends HookName>(key: K): Array<NonNullable<RunFeature[K]>> =>
      features.flatMap((feature) => {
        const hook = feature[key];
        return typeof hook === 'function' ? [hook.bind(feature) as NonNullable<RunFeature[K]>] : [];
      });
    const lists: Partial<Record<HookName, unknown[]>> = {};
    for (const key of Object.keys(HOOKS) as HookName[]) lists[key] = hooks(key);
    this.hooks = lists as HookLists;
  }

  start(live: LiveRun, kept: RunState | undefined): void {
    for (const hook of this.hooks.start) hook(live, kept);
  }

  /** Undefined when no feature looks at a run before it begins (no promise to wait for). */
  beforeRun(live: LiveRun): Promise<RunStop | undefined> | undefined {
    if (this.hooks.beforeRun.length === 0) return undefined;
    return (async () => {
      for (const hook of this.hooks.beforeRun) {
        const stop = await hook(live);
        if (stop) return stop;
      }
      return undefined;
    })();
  }

  /** What watches the next turn; undefined when no feature does. */
  watchTurn(live: LiveRun): TurnWatch | undefined {
    if (this.hooks.watchTurn.length === 0) return undefined;
    const watches = this.hooks.watchTurn.flatMap((hook) => hook(live) ?? []);
    if (watches.length <= 1) return watches[0];
    return {
      emit: watches.find((watch) => watch.emit)?.emit,
      judge: async (response) => {
        for (const watch of watches) {
          const next = await watch.judge(response);
          if (next) return next;
        }
        return undefined;
      },
    };
  }

  /** The turn's results past every feature that checks them; undefined when none does. */
  checkResults(live: LiveRun, calls: readonly ToolCall[], results: readonly ToolResult[]): Promise<CheckedResults> | undefined {
    if (this.hooks.checkResults.length === 0) return undefined;
    return (async () => {
      let checked: CheckedResults = { results: results.slice() };
      for (const hook of this.hooks.checkResults) {
        checked = await hook(live, calls, checked.results);
        if (checked.stop) return checked;
      }
      return checked;
    })();
  }

  beforeModel(live: LiveRun): RunStop | undefined {
    for (const hook of this.hooks.beforeModel) {
      const stop = hook(live);
      if (stop) return stop;
    }
    return undefined;
  }

  /** Undefined when no feature has anything to do at this turn's start (no promise to wait for). */
  beforeTurn(live: LiveRun): Promise<RunStop | undefined> | undefined {
    for (let i = 0; i < this.hooks.beforeTurn.length; i++) {
      const pending = (this.hooks.beforeTurn[i] as NonNullable<RunFeature['beforeTurn']>)(live);
      if (pending) return this.beforeTurnFrom(pending, i + 1, live);
    }
    return undefined;
  }

  private async beforeTurnFrom(pending: Promise<RunStop | undefined>, next: number, live: LiveRun): Promise<RunStop | undefined> {
    const stop = await pending;
    if (stop) return stop;
    for (let i = next; i < this.hooks.beforeTurn.length; i++) {
      const later = await (this.hooks.beforeTurn[i] as NonNullable<RunFeature['beforeTurn']>)(live);
      if (later) return later;
    }
    return undefined;
  }

  /** A promise only when a feature's hook gave one (the common case costs no promise). */
  next(live: LiveRun, next: NextStep): NextStep | Promise<NextStep> {
    let step = next;
    for (let i = 0; i < this.hooks.next.length; i++) {
      const later = (this.hooks.next[i] as NonNullable<RunFeature['next']>)(live, step);
      if (later instanceof Promise) return this.nextFrom(later, i + 1, live);
      step = later;
    }
    return step;
  }

  private async nextFrom(pending: Promise<NextStep>, from: number, live: LiveRun): Promise<NextStep> {
    let step = await pending;
    for (let i = from; i < this.hooks.next.length; i++) step = await (this.hooks.next[i] as NonNullable<RunFeature['next']>)(live, step);
    return step;
  }

  afterModel(live: LiveRun, usage: Usage): void {
    for (const hook of this.hooks.afterModel) hook(live, usage);
  }

  /** A result instead of running the call, from the first feature that gives one; a promise only when a feature's check is asynchronous. */
  beforeTool(live: LiveRun, call: ToolCall): CallRefusal | undefined | Promise<CallRefusal | undefined> {
    for (let i = 0; i < this.hooks.beforeTool.length; i++) {
      const refusal = (this.hooks.beforeTool[i] as NonNullable<RunFeature['beforeTool']>)(live, call);
      if (refusal instanceof Promise) return this.beforeToolFrom(refusal, i + 1, live, call);
      if (refusal) return refusal;
    }
    return undefined;
  }

  private async beforeToolFrom(
    pending: Promise<CallRefusal | undefined>,
    next: number,
    live: LiveRun,
    call: ToolCall,
  ): Promise<CallRefusal | undefined> {
    const refusal = await pending;
    if (refusal) return refusal;
    for (let i = next; i < this.hooks.beforeTool.length; i++) {
      const later = await (this.hooks.beforeTool[i] as NonNullable<RunFeature['beforeTool']>)(live, call);
      if (later) return later;
    }
    return undefined;
  }

  /** Sets each feature's part of the call's context; undefined when nothing is to be closed after the call. */
  toolContext(live: LiveRun, call: ToolCall, ctx: AgentToolContext): (() => void) | undefined {
    let closers: Array<() => void> | undefined;
    for (const hook of this.hooks.toolContext) {
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
    for (const hook of this.hooks.afterTool) hook(live, result);
  }

  afterTools(live: LiveRun, calls: readonly ToolCall[], results: readonly ToolResult[]): RunStop | undefined {
    for (const hook of this.hooks.afterTools) {
      const stop = hook(live, calls, results);
      if (stop) return stop;
    }
    return undefined;
  }

  onStop(live: LiveRun, stop: RunStop): RunStop {
    let told = stop;
    for (const hook of this.hooks.onStop) told = hook(live, told);
    return told;
  }
}
