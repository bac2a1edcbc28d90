import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, RunCancelledError } from '../errors';
import type { Answer } from '../results/wire';
import { checkedAudit } from '../suspension/audit';
import { ResumeCoordinator } from '../suspension/coordinator';
import { Telemetry } from '../telemetry/telemetry';
import { systemClock } from '../timing/clock';
import type { FunctionTool } from '../toolkit/define-tool';
import type { Toolkit } from '../toolkit/toolkit';
import type { SessionStore } from '../sessions/store';
import type { ChatMessage, ChatModel, ModelTool } from '../models/types';
import { Checkpoints } from './core/checkpoints';
import { subAgentTool, type SubAgentToolOptions } from './core/child-run';
import { driveNew } from './durability/drive';
import { handoffTool, type HandoffOptions } from './features/handoff';
import type { AgentParts, Emit, LiveRun } from './core/live-run';
import { AbortLatch, onAbortOf } from '../timing/abort-latch';
import {
  checkRunId,
  checkRunnerOptions,
  copyMessage,
  hook,
  limitOf,
  type AgentRunnerOptions,
  type OrphanRecovery,
  type ResumeOptions,
  type RunOptions,
  type WithOutput,
} from './core/options';
import { armed } from './core/cancel-stop';
import { MemoryRunStore, runStoreOf } from './durability/memory';
import { DEFAULT_OUTPUT_REPAIRS, offeredTools, startOutput } from './core/output';
import { continueAnswered, continueRun, recoverRun } from './durability/resume';
import { openTrace, traced } from './core/run-trace';
import type { RunStore } from './core/store';
import { streamRun } from './core/stream';
import { threadsOf, type HeldSession, type Threads } from './features/threads';
import type { RunEvent, RunResult } from './core/types';
import { zeroUsage } from './core/usage';
import { promptWithSkills } from './features/skills';
import { guardrailsOf } from './core/guardrails/check';
import { budgetOf, NOTHING_SPENT, pricesOf, type Budget, type SessionBudget } from './core/budget';
import { checkPriced, startBudget } from './features/spending';
import { NO_FEATURES, runnerFeatures } from './features/runner-features';
import { RUN_BUDGET, whileDriving, type Driving } from './core/live-run';
import { cancelStored, judgeCancel, type CancelOptions } from './core/cancel';
import { SteerQueue, steerRun, type SteerOptions, type SteerReceipt } from './core/steer';
import { recoverOrphans, startRecovery, type Recovery, type RecoveryOptions } from './recovery';

export type { AgentToolContext } from './core/live-run';
export type { AgentRunnerOptions, OrphanRecovery, ResumeOptions, RunOptions } from './core/options';

/**
 * Drives a chat model through the tool-calling loop: ask the model, run every tool call
 * of the turn in parallel, feed the results back in call order, repeat until the model
 * answers or `maxTurns` is reached. A suspended call is answered inline with `waitFor`,
 * or halts the run durably: the run is checkpointed and any process with the same store,
 * tools and model continues it with `resume`.
 *
 * @example
 * ```ts
 * const runner = new AgentRunner({ model, toolkit, coordinator })
 * const first = await runner.run('Pay invoice 7')
 * if (first.status === 'halted') {
 *   // ... later, anywhere:
 *   const final = await runner.resume({ id: first.pending.id, ok: true })
 * }
 * ```
 */
export class AgentRunner {
  readonly model: ChatModel;
  readonly toolkit: Toolkit;
  readonly coordinator: ResumeCoordinator;
  private readonly parts: AgentParts;
  /** The agents this one hands conversations to, by name. */
  private readonly handoffs = new Map<string, AgentRunner>();
  /** This agent's name, when it has one. */
  readonly name?: string;
  private readonly maxOutputRepairs: number;
  /** Where this runner keeps conversations (list, read and delete them here); undefined when its store keeps none. */
  readonly sessions: SessionStore | undefined;
  private readonly threads: Threads | undefined;
  /** The toolkit's entries as last offered: the same array while they are unchanged, so models cache their provider shape. */
  private offeredTools: readonly ModelTool[] = [];
  /** The runs this runner drives now: what {@link cancel} aborts. */
  private readonly driving = new Map<string, Driving>();

  constructor(options: AgentRunnerOptions) {
    const { maxTurns, runLeaseMs } = checkRunnerOptions(options);
    this.model = options.model;
    this.toolkit = options.toolkit;
    this.coordinator = options.coordinator ?? new ResumeCoordinator({ toolkit: options.toolkit, store: new MemoryRunStore() });
    const runs: Partial<RunStore> | undefined = options.runs ?? runStoreOf(this.coordinator.store);
    if (typeof runs?.saveRun !== 'function' || typeof runs.loadRun !== 'function')
      throw new InvalidArgumentError("runs must be a RunStore (saveRun and loadRun); the coordinator's store is not one, so give `runs`");
    this.name = options.name;
    this.parts = {
      agent: options.name,
      agentParts: (name) => this.reach(name)?.parts,
      durability: options.durability ?? 'halt',
      model: this.model,
      coordinator: this.coordinator,
      checkpoints: new Checkpoints(runs as RunStore, runLeaseMs, options.clock ?? systemClock),
      systemPrompt: promptWithSkills(options.toolkit, options.systemPrompt, options.skills),
      maxTurns,
      maxParallelTools: limitOf(options.maxParallelTools),
      waitFor: options.waitFor,
      onMetric: options.onMetric,
      telemetry: new Telemetry(options.telemetry, 'AgentRunner'),
      clock: options.clock ?? systemClock,
      tools: () => this.currentTools(),
      beforeModel: hook(options.beforeModel, 'beforeModel'),
      afterModel: hook(options.afterModel, 'afterModel'),
      guardrails: guardrailsOf(options.guardrails),
      budget: budgetOf(options.budget, 'budget'),
      sessionBudget: budgetOf(options.sessionBudget, 'sessionBudget'),
      prices: pricesOf(options.prices),
      driving: this.driving,
      features: NO_FEATURES,
    };
    // Composed once, from the parts they read (prices, clock, turn limit).
    this.parts.features = runnerFeatures(this.parts);
    if (options.onMetric !== undefined && typeof options.onMetric !== 'function')
      throw new InvalidArgumentError('onMetric must be a function');
    this.maxOutputRepairs = options.maxOutputRepairs ?? DEFAULT_OUTPUT_REPAIRS;
    if (!Number.isInteger(this.maxOutputRepairs) || this.maxOutputRepairs < 0)
      throw new InvalidArgumentError(`maxOutputRepairs must be an integer >= 0, got ${String(options.maxOutputRepairs)}`);
    this.threads = threadsOf(options, this.coordinator.store);
    this.sessions = this.threads?.store;
    if (this.parts.sessionBudget) {
      if (!this.threads) throw new InvalidArgumentError('sessionBudget needs a session store: give the runner `sessions`');
      checkPriced(this.parts, this.parts.sessionBudget);
    }
  }

  /**
   * Runs the loop from a user message (or a prior transcript) to `done`, `incomplete`,
   * or `halted` (a tool suspended and no `waitFor`: the run is checkpointed).
   * Rejects for model failures (`ModelHttpError`, `ModelTimeoutError`...), a store that
   * cannot record, or the signal's reason when cancelled; never for a tool's own failure.
   */
  async run<T extends object>(input: string | readonly ChatMessage[], options: WithOutput<RunOptions, T>): Promise<RunResult<T>>;
  async run(input: string | readonly ChatMessage[], options?: RunOptions): Promise<RunResult>;
  async run(input: string | readonly ChatMessage[], options: RunOptions = {}): Promise<RunResult> {
    if (options.session !== undefined) return this.inSession(input, options, undefined);
    return this.runTraced(this.begin(input, options, undefined), options.signal);
  }

  /**
   * Like {@link run}, yielding events as they happen: `text` deltas (streamed from the
   * provider when the model can), `tool_call`, `tool_result`, `pending` (with `waitFor`,
   * before it is called), `reasoning` deltas (the model's thinking, when the provider shows
   * it), and finally `done` with the {@link RunResult}. Breaking out of
   * the loop cancels the run.
   */
  stream(input: string | readonly ChatMessage[], options: RunOptions = {}): AsyncGenerator<RunEvent> {
    // The stream's latch follows the caller's signal already.
    return streamRun(options.signal, (emit, latch) =>
      options.session !== undefined
        ? this.inSession(input, options, emit, latch)
        : this.runTraced(this.begin(input, options, emit, undefined, latch), undefined),
    );
  }

  /**
   * Continues a halted run from one answer or several, in any order, from any process
   * that shares the store and registers the same tools and model. Each suspension is
   * replayed exactly once. While some of the halted turn's suspensions remain open (or a
   * replay asked something new: the next link of its chain), the result is `halted` with
   * those, and the model is not called; the answer that closes the last one continues the
   * loop with one tool result per call, in call order. An answer given again identically
   * returns the run's result again (waiting for a live driver, taking over a dead one).
   *
   * @throws {@link InvalidAnswerError} an answer is not Answer-shaped.
   * @throws {@link InvalidResumeError} no answers, one id twice, or answers of several runs.
   * @throws {@link UnknownSuspensionError} no store holds an answer's id.
   * @throws {@link AlreadyResolvedError} an answer contradicts the one already applied (it names the run).
   * @throws {@link SuspensionMismatchError} a stored suspension is not the call in the run's transcript.
   * @throws {@link RunNotFoundError} the suspension's run has no checkpoint.
   */
  async resume<T extends object>(answers: Answer | readonly Answer[], options: WithOutput<ResumeOptions, T>): Promise<RunResult<T>>;
  async resume(answers: Answer | readonly Answer[], options?: ResumeOptions): Promise<RunResult>;
  async resume(answers: Answer | readonly Answer[], options: ResumeOptions = {}): Promise<RunResult> {
    return this.settled(continueRun(this.parts, answers, options, undefined));
  }

  /** {@link resume} as a stream of events, ending with `done`. */
  resumeStream(answers: Answer | readonly Answer[], options: ResumeOptions = {}): AsyncGenerator<RunEvent> {
    return streamRun(options.signal, (emit, latch) =>
      this.settled(continueRun(this.parts, answers, { ...options, signal: latch.signal }, emit)),
    );
  }

  /**
   * Continues a halted run whose questions were all answered without this runner: through the
   * coordinator alone (`answerAs` given the coordinator, `ResumeCoordinator.resolve`, the CLI
   * without a runner). The outcomes are taken into the checkpoint, and the loop goes on from
   * them, as the last answer through {@link resume} would have. A run another process
   * continued meanwhile gets its result (waiting for a live driver, taking over a dead one).
   * For a run whose driver died mid-run, use {@link recover}.
   *
   * @throws {@link RunNotFoundError} no checkpoint for `runId`.
   * @throws {@link InvalidResumeError} some of its questions are still open.
   */
  async continue<T extends object>(runId: string, options: WithOutput<ResumeOptions, T>): Promise<RunResult<T>>;
  async continue(runId: string, options?: ResumeOptions): Promise<RunResult>;
  async continue(runId: string, options: ResumeOptions = {}): Promise<RunResult> {
    checkRunId(runId, 'continue');
    return this.settled(continueAnswered(this.parts, runId, options, undefined));
  }

  /** {@link continue} as a stream of events, ending with `done`. */
  continueStream(runId: string, options: ResumeOptions = {}): AsyncGenerator<RunEvent> {
    checkRunId(runId, 'continue');
    return streamRun(options.signal, (emit, latch) =>
      this.settled(continueAnswered(this.parts, runId, { ...options, signal: latch.signal }, emit)),
    );
  }

  /**
   * Continues a run whose loop stopped after a resume: a model call failed (the checkpoint
   * is `failed`), or the process driving it died (it is `running` and its driver lease has
   * lapsed). `force` takes a `running` run over at once: pass it only when you know its
   * driver is gone. The model is asked again from the saved transcript; no tool call that
   * has a result runs again.
   *
   * @throws {@link RunNotFoundError} no checkpoint for `runId`.
   * @throws {@link InvalidResumeError} the run is waiting for answers, or already over.
   * @throws {@link RunConflictError} another process is driving it (or took it first).
   */
  async recover<T extends object>(runId: string, options: WithOutput<ResumeOptions & { force?: boolean }, T>): Promise<RunResult<T>>;
  async recover(runId: string, options?: ResumeOptions & { force?: boolean }): Promise<RunResult>;
  async recover(runId: string, options: ResumeOptions & { force?: boolean } = {}): Promise<RunResult> {
    checkRunId(runId, 'recover');
    return this.settled(recoverRun(this.parts, runId, options, undefined));
  }

  /** {@link recover} as a stream of events, ending with `done`. */
  recoverStream(runId: string, options: ResumeOptions & { force?: boolean } = {}): AsyncGenerator<RunEvent> {
    checkRunId(runId, 'recover');
    return streamRun(options.signal, (emit, latch) =>
      this.settled(recoverRun(this.parts, runId, { ...options, signal: latch.signal }, emit)),
    );
  }

  /**
   * Takes over the runs whose driver died: every run whose checkpoint says it is `running`
   * and that has not been written for a whole `runLeaseMs` (with durable steps a live driver
   * writes it at least every third of that), oldest first, at most `limit` (default 10), one
   * after the other. Call it from each worker of a fleet now and then: two workers never
   * drive one run (each takeover is a compare-and-set on the checkpoint's version); the one
   * that loses says `taken`. Needs a run store that lists runs (memory, SQLite, PostgreSQL).
   *
   * @throws {@link InvalidArgumentError} the run store cannot list runs.
   */
  async recoverOrphans(options: ResumeOptions & { limit?: number } = {}): Promise<OrphanRecovery[]> {
    return recoverOrphans(this, this.parts, options);
  }

  /**
   * Starts the recovery loop (docs/agents.md, "Restart recovers"): every `intervalMs` (default
   * 5 s, on the runner's clock) one bounded tick applies the takeover rule to calls whose claim
   * lapsed, continues the halted runs whose questions were all answered, and takes over
   * orphaned runs; nothing stays `resolving` or `running` past its lease plus one interval.
   * Start it in every process of a fleet: claims and checkpoint versions give each piece of work to one.
   */
  startRecovery(options: RecoveryOptions = {}): Recovery {
    return startRecovery(this, this.parts, options);
  }

  /**
   * This agent as a tool another runner's Toolkit registers (a **sub-agent**): each call
   * runs it as a child run named `<parent runId>/<callId>` with the call's message (`input`
   * of the default DTO `{ input: string }`), and the call's result is its answer, with the
   * child's run id, transcript and usage in `metadata.subAgent` (the parent adds the usage
   * to its own). A request the child halts on halts the parent too, surfaced as
   * `sub-<child's request id>` with its origin in `data.subAgent`; answering it (answerAs,
   * `resume`, in any process) resumes the child where it stopped. See docs/agents.md, "Sub-agents".
   */
  asTool(options: SubAgentToolOptions): FunctionTool {
    if (typeof options !== 'object' || options === null || typeof options.name !== 'string' || typeof options.description !== 'string')
      throw new InvalidArgumentError('asTool needs { name, description }');
    return subAgentTool(this, options);
  }

  /**
   * Lets this agent's model hand the conversation to `target` (its own model, instructions
   * and tools): registers a tool (`transfer_to_<name>`) in this runner's toolkit. When the
   * model calls it, the run goes on in `target` from the next turn, with the whole
   * transcript; the call and its result record the handoff. A run halted while `target`
   * holds it resumes in `target`, through this runner or any that reaches it by handoffs.
   * Both agents need a `name`. Hand back with `target.handoffTo(this)`. Returns this runner.
   *
   * @throws {@link InvalidArgumentError} either agent has no name, or another agent of that name is already reachable.
   */
  handoffTo(target: AgentRunner, options: HandoffOptions = {}): this {
    if (!(target instanceof AgentRunner)) throw new InvalidArgumentError('handoffTo needs an AgentRunner');
    if (this.name === undefined || target.name === undefined)
      throw new InvalidArgumentError('handoffs need named agents: give both runners a name');
    const known = this.reach(target.name);
    if (known && known !== target)
      throw new InvalidArgumentError(`another agent named ${JSON.stringify(target.name)} is already reachable`);
    this.toolkit.register(handoffTool(target.name, options));
    this.handoffs.set(target.name, target);
    return this;
  }

  /** The agent named `name`: this one, or one reachable through handoffs. */
  private reach(name: string): AgentRunner | undefined {
    const seen = new Set<AgentRunner>();
    const queue: AgentRunner[] = [this];
    while (queue.length > 0) {
      const runner = queue.shift() as AgentRunner;
      if (seen.has(runner)) continue;
      seen.add(runner);
      if (runner.name === name) return runner;
      queue.push(...runner.handoffs.values());
    }
    return undefined;
  }

  /** A run in a session: take it, run on its thread plus the input, write the transcript back. */
  private async inSession(
    input: string | readonly ChatMessage[],
    options: RunOptions,
    emit: Emit | undefined,
    latch?: AbortLatch,
  ): Promise<RunResult> {
    if (!this.threads) throw new InvalidArgumentError('the session option needs a session store: give the runner `sessions`');
    const added = this.begin(input, options, undefined).messages;
    const runId = options.runId ?? `run-${randomUUID()}`;
    const held: HeldSession = await this.threads.hold(options.session as string, runId, added);
    let result: RunResult;
    try {
      const session = this.parts.sessionBudget ? { budget: this.parts.sessionBudget, before: held.spent ?? NOTHING_SPENT } : undefined;
      const live = this.begin([...held.thread, ...added], { ...options, runId }, emit, session, latch);
      result = await this.runTraced(live, latch ? undefined : options.signal);
    } catch (error) {
      await this.threads.release(held).catch(() => undefined);
      throw error;
    }
    await this.threads.finish(held, result);
    return result;
  }

  /** A resumed run's result, written to the session waiting for it (if any). */
  private async settled(running: Promise<RunResult>): Promise<RunResult> {
    const result = await running;
    await this.threads?.writeBack(result);
    return result;
  }

  /** Drives a new run, registered for {@link cancel}; `follow`, the caller's signal, aborts its latch while it runs. */
  private runTraced(live: LiveRun, follow: AbortSignal | undefined): Promise<RunResult> {
    const unfollow = follow ? onAbortOf(follow, (reason) => live.latch.abort(reason)) : undefined;
    const trace = openTrace(this.parts, live.runId, undefined, live.session);
    if (trace) live.trace = trace;
    const running = trace ? traced(trace, () => driveNew(this.parts, live)) : driveNew(this.parts, live);
    const driven = whileDriving(this.driving, live.runId, live.latch, running, live.principal, live.steering);
    return unfollow ? driven.finally(unfollow) : driven;
  }

  /**
   * Cancels a run (docs/agents.md, "Cancel"). One this runner drives now: its model call and
   * its tools' `ctx.signal` abort (with a {@link RunCancelledError} as the reason), and it ends
   * `cancelled`, which `run`/`stream` return (no error). One halted, or driven by another
   * process: its open suspensions are settled `cancelled` as `options.audit.by` and its checkpoint
   * becomes `cancelled`, so nothing continues it (a driving process loses its next write and
   * stops). A cancel naming a principal is judged first (`judgeCancel`). A run over is returned as it ended.
   * @throws {@link AnswerRefusedError} the answer policy refused the cancel: nothing changed, nothing aborted.
   * @throws {@link RunNotFoundError} the run is not driven here and has no checkpoint.
   */
  async cancel(runId: string, options: CancelOptions = {}): Promise<RunResult> {
    checkRunId(runId, 'cancel');
    if (options.reason !== undefined && typeof options.reason !== 'string')
      throw new InvalidArgumentError('cancel reason must be a string');
    const driven = this.driving.get(runId);
    if (!driven) return this.settled(cancelStored(this.parts, runId, options));
    await judgeCancel(this.parts, runId, { principal: driven.principal, open: [] }, options); // before the abort
    driven.latch.abort(new RunCancelledError(runId, options.reason));
    return driven.ended ?? this.settled(cancelStored(this.parts, runId, options));
  }

  /** Steers a run: `message` joins its transcript at its next turn, in any process (docs/agents.md, "Steering"; {@link steerRun}). */
  steer(runId: string, message: string, options?: SteerOptions): Promise<SteerReceipt> {
    checkRunId(runId, 'steer');
    return steerRun(this.parts, runId, message, options);
  }

  private begin(
    input: string | readonly ChatMessage[],
    options: RunOptions,
    emit: Emit | undefined,
    session?: SessionBudget,
    streamLatch?: AbortLatch,
  ): LiveRun {
    let messages: ChatMessage[];
    if (typeof input === 'string') messages = [{ role: 'user', content: input }];
    else if (Array.isArray(input)) messages = input.map(copyMessage);
    else throw new InvalidArgumentError('run needs a user message (a string) or a transcript (an array of messages)');
    const runId = options.runId ?? `run-${randomUUID()}`;
    if (typeof runId !== 'string' || runId === '') throw new InvalidArgumentError('runId must be a non-empty string');
    const tools = this.currentTools();
    const output =
      options.output === undefined
        ? undefined
        : startOutput(options.output, options.maxOutputRepairs ?? this.maxOutputRepairs, this.model, tools);
    const budget = startBudget(this.parts, options.budget, (options as { [RUN_BUDGET]?: Budget })[RUN_BUDGET]);
    // The run's one cancellation (a stream's, which its consumer aborts, or its own).
    const latch = streamLatch ?? new AbortLatch();
    const live: LiveRun = {
      runId,
      messages,
      toolCalls: [],
      turns: 0,
      usage: zeroUsage(),
      turnUsage: [],
      text: '',
      output,
      version: 0,
      tools: offeredTools(tools, output),
      latch,
      signal: armed(this.parts, options, streamLatch) ? latch.signal : undefined,
      context: options.context,
      emit,
      steering: new SteerQueue(undefined),
      ...(options.principal === undefined ? {} : { principal: checkedAudit({ by: options.principal }, 'run')?.by }),
      ...(options.session === undefined ? {} : { session: options.session }),
    };
    if (budget) live.budget = budget;
    if (session) live.sessionBudget = session;
    this.parts.features.start(live, undefined);
    return live;
  }

  private currentTools(): readonly ModelTool[] {
    const tools = this.toolkit.tools();
    const offered = this.offeredTools;
    if (offered.length === tools.length && offered.every((tool, i) => tool === tools[i])) return offered;
    this.offeredTools = tools;
    return tools;
  }
}
