import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, InvalidResumeError, RunConflictError } from '../errors';
import { messageOf } from '../errors/message';
import type { ClassType } from '../decorators/types';
import type { Answer } from '../results/wire';
import type { WaitFor } from '../suspension/answers';
import type { Audit } from '../suspension/audit';
import { DEFAULT_LEASE_MS, ResumeCoordinator } from '../suspension/coordinator';
import type { RunStore } from './store';
import { MemoryRunStore, runStoreOf } from './memory';
import type { Toolkit } from '../toolkit/toolkit';
import { Checkpoints } from './checkpoints';
import { runLoop, type Emit, type LiveRun } from './loop';
import { DEFAULT_OUTPUT_REPAIRS, offeredTools, startOutput } from './output';
import type { Durability } from './durable';
import { subAgentTool, type SubAgentToolOptions } from './sub-agent';
import { handoffTool, type HandoffOptions } from './handoff';
import type { FunctionTool } from '../toolkit/define-tool';
import { continueRun, recoverRun, type ResumeParts } from './resume';
import { streamRun } from './stream';
import type { ModelMetricEvent, RunEvent, RunResult } from './types';
import type { ChatMessage, ChatModel, ModelTool } from '../models/types';
import { zeroUsage } from './usage';
import { openTrace, traced } from './run-trace';
import type { TelemetryOption } from '../telemetry/options';
import { Telemetry } from '../telemetry/telemetry';
import { isSessionStore, type SessionStore } from '../sessions/store';
import { Threads, type HeldSession } from '../sessions/threads';
import { sessionStoreOf } from '../sessions/memory';
import type { AfterModel, BeforeModel } from './transcript/hooks';
import { systemClock, type Clock } from '../timing/clock';

export type { AgentToolContext } from './loop';

/** Options of an {@link AgentRunner}. */
export interface AgentRunnerOptions {
  model: ChatModel;
  toolkit: Toolkit;
  /**
   * Records suspensions and replays them on `resume`. Give one with a durable store
   * (`SqliteStore`, `PostgresStore`) to resume from another process; it must
   * use this runner's toolkit. Default: a coordinator over an in-memory store (resume in this process only).
   */
  coordinator?: ResumeCoordinator;
  /**
   * Where run checkpoints are kept. Default: the coordinator's store, when it is a
   * {@link RunStore} too (the three built-in stores are); give one when it is not.
   */
  runs?: RunStore;
  systemPrompt?: string;
  /** Model calls one run may make before it ends `incomplete`. Default 10. */
  maxTurns?: number;
  /**
   * In-process posture: a suspended call awaits `waitFor(request)` and is replayed with
   * the answer inline (and along its chain); the run never halts. Without it, a suspension halts the run durably.
   */
  waitFor?: WaitFor;
  /**
   * How long a resumed run's driver holds it without renewal; it renews every third of
   * this. A run whose driver died is taken over by `recover` or a repeated `resume` once
   * its lease has lapsed (judged by process clocks). Default 60 000 ms.
   */
  runLeaseMs?: number;
  /**
   * Where the driver lease takes its time: its renewals, the lapse `recover` and `resume` judge,
   * and the checkpoints' timestamps. Default: the system clock; tests pass a fake one to step
   * through renewals and lapses. (A model's retries take their own `clock`, `HttpModelOptions.clock`.)
   */
  clock?: Clock;
  /**
   * Told of every model call: provider, run, turn, token counts and duration. A sink that
   * throws is ignored. (Tool calls have the toolkit's own `onMetric` hook.)
   */
  onMetric?: (event: ModelMetricEvent) => void;
  /** Repair rounds a typed answer (`output`) gets after its first attempt fails validation. Default 2. */
  maxOutputRepairs?: number;
  /**
   * When runs are checkpointed. `'halt'` (default): when a run halts, and while a resumed run
   * is driven; a run that never suspends is never written. `'step'`: also when it starts,
   * after every model response and around every tool call, under the driver lease, so a run
   * whose process died is continued by {@link AgentRunner.recover} (or
   * {@link AgentRunner.recoverOrphans}) from its last step: no recorded response is asked
   * again, no recorded tool result is run again (docs/agents.md, "Durable steps").
   */
  durability?: Durability;
  /**
   * This agent's name: needed to take part in handoffs ({@link AgentRunner.handoffTo}), where
   * the checkpoint records which agent holds the conversation. Every agent a run may reach
   * needs its own name, and all must share one store.
   */
  name?: string;
  /**
   * OpenTelemetry: `invoke_agent` per run and per resume, `chat` per model call and the
   * gen_ai client histograms, by the global providers unless this picks others or turns
   * them off. Tool spans are the toolkit's, resolutions the coordinator's: give each the
   * same option (docs/observability.md).
   */
  telemetry?: TelemetryOption;
  /**
   * Where conversations are kept for the `session` option of `run`/`stream`. Default: the
   * coordinator's store (each of the three stores is a session store). docs/chat.md, "Sessions".
   */
  sessions?: SessionStore;
  /** The most messages a session's thread may hold; a run that would pass it is refused (`SessionFullError`). Default 10 000. */
  maxSessionMessages?: number;
  /** The most bytes (as JSON) a session's thread may hold; as `maxSessionMessages`. Default 8 MiB. */
  maxSessionBytes?: number;
  /**
   * How long a run holds its session while it runs; a process that died holding one frees
   * it after this. Longer runs are taken over. Default 600 000 ms (10 minutes).
   */
  sessionHoldMs?: number;
  /**
   * Rewrites each model request before it is sent: messages, tools, system prompt (a copy;
   * the run's transcript is unchanged). `trimToTokens` and `summarizeOlder` are two. docs/chat.md, "Context".
   */
  beforeModel?: BeforeModel;
  /** Sees each model answer before the run uses it; may return a changed copy. */
  afterModel?: AfterModel;
}

/** What {@link AgentRunner.recoverOrphans} did with one orphaned run. */
export type OrphanRecovery =
  /** This process took the run over: where it stands now (`done`, or `pending`: a `recovery` request, say). */
  | { runId: string; status: 'recovered'; result: RunResult }
  /** Another process took it first, or its driver renewed its lease after all. */
  | { runId: string; status: 'taken' }
  /** Taking it over failed (the model failed again, say): the error, and the run is left for a later attempt. */
  | { runId: string; status: 'failed'; error: Error };

/** Options of {@link AgentRunner.run} and {@link AgentRunner.stream}. */
export interface RunOptions {
  /** Names the run (its checkpoint key). Default: `run-` + a random UUID. */
  runId?: string;
  /** Cancels the run: model calls abort, tools see it as `ctx.signal`. */
  signal?: AbortSignal;
  /** Host state every tool call gets a shallow copy of (identity, tenant, a DI scope...). */
  context?: object;
  /**
   * Asks for a typed final answer: a class-validator DTO. The model is asked for its JSON
   * Schema (natively where the model has structured output, else through a `final_answer`
   * tool), the answer is validated like tool arguments, and a `done` result carries the
   * DTO instance as `output`. See docs/agents.md, "Typed answers".
   */
  output?: ClassType;
  /** Overrides the runner's `maxOutputRepairs` for this run. */
  maxOutputRepairs?: number;
  /**
   * Continues the conversation kept under this id: the input is appended to its thread, and
   * the run's new turns are written back when it ends or halts (a halted run's later turns
   * when it is resumed, wherever). A session busy with another run refuses with
   * `SessionBusyError`. docs/chat.md, "Sessions".
   */
  session?: string;
}

/**
 * Options of {@link AgentRunner.resume} and {@link AgentRunner.recover}. The context is
 * the host's again: it is never stored. A run that asks for a typed answer needs its DTO
 * class again as `output` (the checkpoint names it; a class cannot be stored).
 */
export interface ResumeOptions {
  signal?: AbortSignal;
  context?: object;
  output?: ClassType;
  /**
   * Recorded with every answer of this resume, as `ResumeCoordinator.resolve` records it:
   * who answered and why (docs/operating.md, "Audit trail").
   */
  audit?: Audit;
}

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
  private readonly parts: ResumeParts;
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

  constructor(options: AgentRunnerOptions) {
    if (!options || typeof options.model?.complete !== 'function')
      throw new InvalidArgumentError('AgentRunner needs a model with a complete() method');
    if (typeof options.toolkit?.execute !== 'function') throw new InvalidArgumentError('AgentRunner needs a toolkit');
    const maxTurns = options.maxTurns ?? 10;
    if (!Number.isInteger(maxTurns) || maxTurns < 1)
      throw new InvalidArgumentError(`maxTurns must be a positive integer, got ${String(options.maxTurns)}`);
    const runLeaseMs = options.runLeaseMs ?? DEFAULT_LEASE_MS;
    if (!Number.isFinite(runLeaseMs) || runLeaseMs <= 0)
      throw new InvalidArgumentError(`runLeaseMs must be a positive number of milliseconds, got ${String(options.runLeaseMs)}`);
    if (options.waitFor !== undefined && typeof options.waitFor !== 'function')
      throw new InvalidArgumentError('waitFor must be a function');
    if (options.coordinator && options.coordinator.toolkit !== options.toolkit) {
      throw new InvalidArgumentError(
        "the coordinator must use the runner's toolkit: the model is offered one set of tools and must be served by the same",
      );
    }
    this.model = options.model;
    this.toolkit = options.toolkit;
    this.coordinator = options.coordinator ?? new ResumeCoordinator({ toolkit: options.toolkit, store: new MemoryRunStore() });
    const runs: Partial<RunStore> | undefined = options.runs ?? runStoreOf(this.coordinator.store);
    if (typeof runs?.saveRun !== 'function' || typeof runs.loadRun !== 'function')
      throw new InvalidArgumentError("runs must be a RunStore (saveRun and loadRun); the coordinator's store is not one, so give `runs`");
    if (options.durability !== undefined && options.durability !== 'halt' && options.durability !== 'step')
      throw new InvalidArgumentError(`durability must be 'halt' or 'step', got ${JSON.stringify(options.durability)}`);
    if (options.name !== undefined && (typeof options.name !== 'string' || options.name === ''))
      throw new InvalidArgumentError('name must be a non-empty string');
    this.name = options.name;
    this.parts = {
      agent: options.name,
      agentParts: (name) => this.reach(name)?.parts,
      durability: options.durability ?? 'halt',
      model: this.model,
      coordinator: this.coordinator,
      checkpoints: new Checkpoints(runs as RunStore, runLeaseMs, options.clock ?? systemClock),
      systemPrompt: options.systemPrompt,
      maxTurns,
      waitFor: options.waitFor,
      onMetric: options.onMetric,
      telemetry: new Telemetry(options.telemetry, 'AgentRunner'),
      tools: () => this.currentTools(),
      beforeModel: hook(options.beforeModel, 'beforeModel'),
      afterModel: hook(options.afterModel, 'afterModel'),
    };
    if (options.onMetric !== undefined && typeof options.onMetric !== 'function')
      throw new InvalidArgumentError('onMetric must be a function');
    this.maxOutputRepairs = options.maxOutputRepairs ?? DEFAULT_OUTPUT_REPAIRS;
    if (!Number.isInteger(this.maxOutputRepairs) || this.maxOutputRepairs < 0)
      throw new InvalidArgumentError(`maxOutputRepairs must be an integer >= 0, got ${String(options.maxOutputRepairs)}`);
    this.threads = sessionsOf(options, this.coordinator.store);
    this.sessions = this.threads?.store;
  }

  /**
   * Runs the loop from a user message (or a prior transcript) to `done`, `incomplete`,
   * or `pending` (a tool suspended and no `waitFor`: the run is checkpointed).
   * Rejects for model failures (`ModelHttpError`, `ModelTimeoutError`...), a store that
   * cannot record, or the signal's reason when cancelled; never for a tool's own failure.
   */
  async run<T extends object>(
    input: string | readonly ChatMessage[],
    options: RunOptions & { output: ClassType<T> },
  ): Promise<RunResult<T>>;
  async run(input: string | readonly ChatMessage[], options?: RunOptions): Promise<RunResult>;
  async run(input: string | readonly ChatMessage[], options: RunOptions = {}): Promise<RunResult> {
    if (options.session !== undefined) return this.inSession(input, options, undefined);
    return this.runTraced(this.begin(input, options, undefined));
  }

  /**
   * Like {@link run}, yielding events as they happen: `text` deltas (streamed from the
   * provider when the model can), `tool_call`, `tool_result`, `pending` (with `waitFor`,
   * before it is called), `reasoning` deltas (the model's thinking, when the provider shows
   * it), and finally `done` with the {@link RunResult}. Breaking out of
   * the loop cancels the run.
   */
  stream(input: string | readonly ChatMessage[], options: RunOptions = {}): AsyncGenerator<RunEvent> {
    return streamRun(options.signal, (emit, signal) =>
      options.session !== undefined
        ? this.inSession(input, { ...options, signal }, emit)
        : this.runTraced(this.begin(input, { ...options, signal }, emit)),
    );
  }

  /**
   * Continues a halted run from one answer or several, in any order, from any process
   * that shares the store and registers the same tools and model. Each suspension is
   * replayed exactly once. While some of the halted turn's suspensions remain open (or a
   * replay asked something new: the next link of its chain), the result is `pending` with
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
  async resume<T extends object>(
    answers: Answer | readonly Answer[],
    options: ResumeOptions & { output: ClassType<T> },
  ): Promise<RunResult<T>>;
  async resume(answers: Answer | readonly Answer[], options?: ResumeOptions): Promise<RunResult>;
  async resume(answers: Answer | readonly Answer[], options: ResumeOptions = {}): Promise<RunResult> {
    return this.settled(continueRun(this.parts, answers, options, undefined));
  }

  /** {@link resume} as a stream of events, ending with `done`. */
  resumeStream(answers: Answer | readonly Answer[], options: ResumeOptions = {}): AsyncGenerator<RunEvent> {
    return streamRun(options.signal, (emit, signal) => this.settled(continueRun(this.parts, answers, { ...options, signal }, emit)));
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
  async recover<T extends object>(runId: string, options: ResumeOptions & { force?: boolean; output: ClassType<T> }): Promise<RunResult<T>>;
  async recover(runId: string, options?: ResumeOptions & { force?: boolean }): Promise<RunResult>;
  async recover(runId: string, options: ResumeOptions & { force?: boolean } = {}): Promise<RunResult> {
    if (typeof runId !== 'string' || runId === '') throw new InvalidArgumentError('recover needs a runId');
    return this.settled(recoverRun(this.parts, runId, options, undefined));
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
    const { limit = 10, ...resume } = options;
    const outcomes: OrphanRecovery[] = [];
    for (const orphan of await this.parts.checkpoints.orphans(limit)) {
      try {
        outcomes.push({ runId: orphan.runId, status: 'recovered', result: await this.recover(orphan.runId, resume) });
      } catch (error) {
        if (error instanceof RunConflictError || error instanceof InvalidResumeError)
          outcomes.push({ runId: orphan.runId, status: 'taken' });
        else outcomes.push({ runId: orphan.runId, status: 'failed', error: error instanceof Error ? error : new Error(messageOf(error)) });
      }
    }
    return outcomes;
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

  /** {@link recover} as a stream of events, ending with `done`. */
  recoverStream(runId: string, options: ResumeOptions & { force?: boolean } = {}): AsyncGenerator<RunEvent> {
    if (typeof runId !== 'string' || runId === '') throw new InvalidArgumentError('recover needs a runId');
    return streamRun(options.signal, (emit, signal) => this.settled(recoverRun(this.parts, runId, { ...options, signal }, emit)));
  }

  /** A run in a session: take it, run on its thread plus the input, write the transcript back. */
  private async inSession(input: string | readonly ChatMessage[], options: RunOptions, emit: Emit | undefined): Promise<RunResult> {
    if (!this.threads) throw new InvalidArgumentError('the session option needs a session store: give the runner `sessions`');
    const added = this.begin(input, options, undefined).messages;
    const runId = options.runId ?? `run-${randomUUID()}`;
    const held: HeldSession = await this.threads.hold(options.session as string, runId, added);
    let result: RunResult;
    try {
      result = await this.runTraced(this.begin([...held.thread, ...added], { ...options, runId }, emit));
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
    await this.threads?.settle(result);
    return result;
  }

  private runTraced(live: LiveRun): Promise<RunResult> {
    const trace = openTrace(this.parts, live.runId);
    if (!trace) return runLoop(this.parts, live);
    live.trace = trace;
    return traced(trace, () => runLoop(this.parts, live));
  }

  private begin(input: string | readonly ChatMessage[], options: RunOptions, emit: Emit | undefined): LiveRun {
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
    return {
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
      signal: options.signal,
      context: options.context,
      emit,
    };
  }

  private currentTools(): readonly ModelTool[] {
    const tools = this.toolkit.tools();
    const offered = this.offeredTools;
    if (offered.length === tools.length && offered.every((tool, i) => tool === tools[i])) return offered;
    this.offeredTools = tools;
    return tools;
  }
}

function hook<T>(value: T | undefined, name: string): T | undefined {
  if (value !== undefined && typeof value !== 'function') throw new InvalidArgumentError(`${name} must be a function`);
  return value;
}

function sessionsOf(options: AgentRunnerOptions, store: unknown): Threads | undefined {
  const sessions = options.sessions ?? sessionStoreOf(store);
  if (options.sessions !== undefined && !isSessionStore(options.sessions))
    throw new InvalidArgumentError('sessions must be a SessionStore (loadSession, saveSession, listSessions, deleteSession, sessionOfRun)');
  const limit = (value: number | undefined, fallback: number, name: string): number => {
    const chosen = value ?? fallback;
    if (!Number.isSafeInteger(chosen) || chosen < 1)
      throw new InvalidArgumentError(`${name} must be a positive integer, got ${String(value)}`);
    return chosen;
  };
  const limits = {
    maxMessages: limit(options.maxSessionMessages, 10_000, 'maxSessionMessages'),
    maxBytes: limit(options.maxSessionBytes, 8 * 1024 * 1024, 'maxSessionBytes'),
    holdMs: limit(options.sessionHoldMs, 600_000, 'sessionHoldMs'),
  };
  return sessions ? new Threads(sessions, limits) : undefined;
}

function copyMessage(message: ChatMessage): ChatMessage {
  if (typeof message !== 'object' || message === null || !['user', 'assistant', 'tool'].includes(message.role)) {
    throw new InvalidArgumentError('every transcript entry needs a role of "user", "assistant" or "tool"');
  }
  return message.role === 'assistant' && message.toolCalls
    ? { ...message, toolCalls: message.toolCalls.map((call) => ({ ...call })) }
    : { ...message };
}
