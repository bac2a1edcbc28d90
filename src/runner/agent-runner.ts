import { randomUUID } from 'node:crypto';
import {
  AlreadyResolvedError,
  InvalidAnswerError,
  InvalidArgumentError,
  InvalidResumeError,
  ModelResponseError,
  RunCheckpointError,
  RunConflictError,
  RunNotFoundError,
  UnknownSuspensionError,
} from '../errors';
import { failure, pendingOf } from '../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../results/wire';
import { answerInline, answerProblem, type WaitFor } from '../suspension/answers';
import { ResumeCoordinator } from '../suspension/coordinator';
import { isSettled } from '../suspension/status';
import type { SuspendedCall } from '../suspension/store';
import type { ToolContext } from '../toolkit/context';
import type { Toolkit } from '../toolkit/toolkit';
import { EventQueue } from './event-queue';
import { readRunState, RUN_STATE_FORMAT, type HaltedCall, type RunState } from './state';
import type { ChatMessage, ChatModel, ModelResponse, ModelTool, RunEvent, RunResult, RunStatus, ToolCall, ToolCallRecord, Usage } from './types';
import { messageOf } from '../errors/message';

/** Options of an {@link AgentRunner}. */
export interface AgentRunnerOptions {
  model: ChatModel;
  toolkit: Toolkit;
  /**
   * Records suspensions and replays them on `resume`. Give one with a durable store
   * (`SqlitePendingStore`, `PostgresPendingStore`) to resume from another process; it must
   * use this runner's toolkit. Default: a coordinator over an in-memory store (resume in this process only).
   */
  coordinator?: ResumeCoordinator;
  systemPrompt?: string;
  /** Model calls one run may make before it ends `incomplete`. Default 10. */
  maxTurns?: number;
  /**
   * In-process posture: a suspended call awaits `waitFor(request)` and is replayed with
   * the answer inline (CONTRACT §5); the run never halts. Without it, a suspension halts the run durably.
   */
  waitFor?: WaitFor;
}

/** Options of {@link AgentRunner.run} and {@link AgentRunner.stream}. */
export interface RunOptions {
  /** Names the run (its checkpoint key). Default: `run-` + a random UUID. */
  runId?: string;
  /** Cancels the run: model calls abort, tools see it as `ctx.signal`. */
  signal?: AbortSignal;
  /** Host state every tool call gets a shallow copy of (identity, tenant, a DI scope...). */
  context?: object;
}

/** Options of {@link AgentRunner.resume}. The context is the host's again: it is never stored. */
export interface ResumeOptions {
  signal?: AbortSignal;
  context?: object;
}

/** The context a tool receives from the runner: the run's `context`, plus `signal` and the provider's `callId`. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the neutral element of `&`
export type AgentToolContext<TState extends object = {}> = ToolContext<TState & { callId: string }>;

type Emit = (event: RunEvent) => void;

/** The working state of one run while this process drives it. */
interface LiveRun {
  runId: string;
  messages: ChatMessage[];
  toolCalls: ToolCallRecord[];
  turns: number;
  usage: Usage;
  text: string;
  /** The checkpoint version this process last read or wrote; 0 when the run was never checkpointed. */
  version: number;
  tools: readonly ModelTool[];
  signal?: AbortSignal;
  context?: object;
  emit?: Emit;
}

const MAX_MERGE_ATTEMPTS = 100;

/**
 * Drives a chat model through the tool-calling loop (CONTRACT §6): ask the model, run every
 * tool call of the turn in parallel, feed the results back in call order, repeat until the
 * model answers or `maxTurns` is reached. A suspended call is answered inline with
 * `waitFor`, or halts the run durably: the run is checkpointed in the coordinator's store
 * and any process with the same store, tools and model continues it with `resume`.
 *
 * @example
 * ```ts
 * const runner = new AgentRunner({ model, toolkit, coordinator })
 * const first = await runner.run('Pay invoice 7')
 * if (first.status === 'pending') {
 *   // ... later, anywhere:
 *   const final = await runner.resume({ id: first.pending!.id, ok: true })
 * }
 * ```
 */
export class AgentRunner {
  readonly model: ChatModel;
  readonly toolkit: Toolkit;
  readonly coordinator: ResumeCoordinator;
  private readonly systemPrompt?: string;
  private readonly maxTurns: number;
  private readonly waitFor?: WaitFor;
  /** The toolkit's entries as last offered: the same array while they are unchanged, so models cache their provider shape. */
  private offeredTools: readonly ModelTool[] = [];

  constructor(options: AgentRunnerOptions) {
    if (!options || typeof options.model?.complete !== 'function') throw new InvalidArgumentError('AgentRunner needs a model with a complete() method');
    if (typeof options.toolkit?.execute !== 'function') throw new InvalidArgumentError('AgentRunner needs a toolkit');
    const maxTurns = options.maxTurns ?? 10;
    if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new InvalidArgumentError(`maxTurns must be a positive integer, got ${String(options.maxTurns)}`);
    if (options.waitFor !== undefined && typeof options.waitFor !== 'function') throw new InvalidArgumentError('waitFor must be a function');
    if (options.coordinator && options.coordinator.toolkit !== options.toolkit) {
      throw new InvalidArgumentError("the coordinator must use the runner's toolkit: the model is offered one set of tools and must be served by the same");
    }
    this.model = options.model;
    this.toolkit = options.toolkit;
    this.coordinator = options.coordinator ?? new ResumeCoordinator({ toolkit: options.toolkit });
    this.systemPrompt = options.systemPrompt;
    this.maxTurns = maxTurns;
    this.waitFor = options.waitFor;
  }

  /**
   * Runs the loop from a user message (or a prior transcript) to `done`, `incomplete`,
   * or `pending` (a tool suspended and no `waitFor`: the run is checkpointed).
   * Rejects for model failures (`ModelHttpError`, `ModelTimeoutError`...), a store that
   * cannot record, or the signal's reason when cancelled; never for a tool's own failure.
   */
  async run(input: string | readonly ChatMessage[], options: RunOptions = {}): Promise<RunResult> {
    return this.loop(this.begin(input, options, undefined));
  }

  /**
   * Like {@link run}, yielding events as they happen: `text` deltas (streamed from the
   * provider when the model can), `tool_call`, `tool_result`, `pending` (with `waitFor`,
   * before it is called), and finally `done` with the {@link RunResult}. Breaking out of
   * the loop cancels the run.
   */
  stream(input: string | readonly ChatMessage[], options: RunOptions = {}): AsyncGenerator<RunEvent> {
    return this.streamed(options.signal, (emit, signal) => this.loop(this.begin(input, { ...options, signal }, emit)));
  }

  /**
   * Continues a halted run from one answer or several, in any order, from any process
   * that shares the store and registers the same tools and model. Each suspension is
   * replayed exactly once. While some of the halted turn's suspensions remain open, the
   * result is `pending` with those (and the model is not called); the answer that closes
   * the last one continues the loop with one tool result per call, in call order.
   *
   * @throws {@link InvalidAnswerError} an answer is not Answer-shaped.
   * @throws {@link InvalidResumeError} no answers, one id twice, or answers of several runs.
   * @throws {@link UnknownSuspensionError} no store holds an answer's id.
   * @throws {@link AlreadyResolvedError} an answer's suspension is already settled for this run.
   * @throws {@link RunNotFoundError} the suspension's run has no checkpoint.
   */
  async resume(answers: Answer | readonly Answer[], options: ResumeOptions = {}): Promise<RunResult> {
    return this.continueRun(answers, options, undefined);
  }

  /** {@link resume} as a stream of events, ending with `done`. */
  resumeStream(answers: Answer | readonly Answer[], options: ResumeOptions = {}): AsyncGenerator<RunEvent> {
    return this.streamed(options.signal, (emit, signal) => this.continueRun(answers, { ...options, signal }, emit));
  }

  /**
   * Continues a run whose loop stopped after a resume: a model call failed (the checkpoint
   * is `failed`), or, with `force`, the process driving it died (it is still `running`;
   * pass `force` only when you know that process is gone). The model is asked again from
   * the saved transcript; no tool call that has a result runs again.
   *
   * @throws {@link RunNotFoundError} no checkpoint for `runId`.
   * @throws {@link InvalidResumeError} the run is waiting for answers, or already over.
   * @throws {@link RunConflictError} another process is continuing it (or took it first).
   */
  async recover(runId: string, options: ResumeOptions & { force?: boolean } = {}): Promise<RunResult> {
    return this.recoverRun(runId, options, undefined);
  }

  /** {@link recover} as a stream of events, ending with `done`. */
  recoverStream(runId: string, options: ResumeOptions & { force?: boolean } = {}): AsyncGenerator<RunEvent> {
    return this.streamed(options.signal, (emit, signal) => this.recoverRun(runId, { ...options, signal }, emit));
  }

  private begin(input: string | readonly ChatMessage[], options: RunOptions, emit: Emit | undefined): LiveRun {
    let messages: ChatMessage[];
    if (typeof input === 'string') messages = [{ role: 'user', content: input }];
    else if (Array.isArray(input)) messages = input.map(copyMessage);
    else throw new InvalidArgumentError('run needs a user message (a string) or a transcript (an array of messages)');
    const runId = options.runId ?? `run-${randomUUID()}`;
    if (typeof runId !== 'string' || runId === '') throw new InvalidArgumentError('runId must be a non-empty string');
    return {
      runId,
      messages,
      toolCalls: [],
      turns: 0,
      usage: { inputTokens: 0, outputTokens: 0 },
      text: '',
      version: 0,
      tools: this.currentTools(),
      signal: options.signal,
      context: options.context,
      emit,
    };
  }

  private async loop(live: LiveRun): Promise<RunResult> {
    for (;;) {
      if (live.turns >= this.maxTurns) return this.end(live, 'incomplete');
      let response: ModelResponse;
      try {
        if (live.signal?.aborted) throw live.signal.reason;
        response = await this.ask(live);
      } catch (error) {
        if (live.version > 0) await this.saveFailure(live, error);
        throw error;
      }
      live.turns++;
      live.usage.inputTokens += response.usage.inputTokens;
      live.usage.outputTokens += response.usage.outputTokens;
      live.text = response.text;
      const calls = response.toolCalls;
      if (calls.length === 0) {
        live.messages.push({ role: 'assistant', content: response.text });
        return this.end(live, 'done');
      }
      live.messages.push({ role: 'assistant', content: response.text, toolCalls: calls });
      if (live.emit) for (const call of calls) live.emit({ type: 'tool_call', call });
      const results = await Promise.all(calls.map((call) => this.callTool(live, call)));
      if (!this.waitFor && results.some((result) => pendingOf(result) !== undefined)) return this.halt(live, calls, results);
      feed(live, calls, results, live.turns);
    }
  }

  private async ask(live: LiveRun): Promise<ModelResponse> {
    const request = { system: this.systemPrompt, messages: live.messages.slice(), tools: live.tools, signal: live.signal };
    const emit = live.emit;
    if (!emit || typeof this.model.stream !== 'function') {
      const response = await this.model.complete(request);
      if (emit && response.text !== '') emit({ type: 'text', delta: response.text });
      return response;
    }
    let response: ModelResponse | undefined;
    for await (const event of this.model.stream(request)) {
      if (event.type === 'text') emit({ type: 'text', delta: event.delta });
      else if (event.type === 'response') response = event.response;
    }
    if (!response) throw new ModelResponseError(this.model.provider, 'the stream ended without a response');
    return response;
  }

  /** Runs one call; never rejects for the model's or the tool's doing (only for a store that cannot record). */
  private async callTool(live: LiveRun, call: ToolCall): Promise<ToolResult> {
    let result: ToolResult;
    const args = parseArguments(call.arguments);
    if (!args.ok) {
      result = failure(`invalid arguments for ${call.name}: ${args.problem}`);
    } else {
      const ctx = callContext(live.context, live.signal, call.id);
      result = this.waitFor
        ? await this.answerInline(live, call, args.value, ctx)
        : await this.coordinator.execute(call.name, args.value, ctx, { callId: call.id, runId: live.runId });
    }
    if (live.emit) {
      const request = pendingOf(result);
      live.emit(request ? { type: 'pending', callId: call.id, request } : { type: 'tool_result', callId: call.id, name: call.name, result });
    }
    return result;
  }

  /** The §5 rule with `waitFor`; the stream announces the request before waiting. */
  private async answerInline(live: LiveRun, call: ToolCall, args: unknown, ctx: AgentToolContext): Promise<ToolResult> {
    const first = await this.toolkit.execute(call.name, args, ctx);
    const request = pendingOf(first);
    if (!request) return first;
    live.emit?.({ type: 'pending', callId: call.id, request });
    return answerInline(this.toolkit, this.waitFor as WaitFor, call.name, args, ctx, request);
  }

  /** Every call of the turn has finished; the suspended ones are recorded. Checkpoint and stop. */
  private async halt(live: LiveRun, calls: ToolCall[], results: ToolResult[]): Promise<RunResult> {
    const halted: HaltedCall[] = calls.map((call, i) => {
      const result = results[i] as ToolResult;
      const request = pendingOf(result);
      return request ? { call, result, pendingId: request.id } : { call, result };
    });
    const state = snapshot(live, 'halted', { turn: live.turns, calls: halted });
    try {
      await this.save(live, state);
    } catch (error) {
      // No checkpoint means no run could ever continue these: settle them rather than leave orphans.
      await Promise.allSettled(halted.filter((entry) => entry.pendingId).map((entry) => this.coordinator.cancel(entry.pendingId as string, messageOf(error))));
      throw error;
    }
    const result = pendingResult(live.runId, state);
    live.emit?.({ type: 'done', result });
    return result;
  }

  private async end(live: LiveRun, status: Exclude<RunStatus, 'pending'>): Promise<RunResult> {
    // A run that was never checkpointed stays out of the store: the common case costs no I/O.
    if (live.version > 0) await this.save(live, snapshot(live, status, undefined));
    const result: RunResult = {
      status,
      text: live.text,
      messages: live.messages,
      toolCalls: live.toolCalls,
      turns: live.turns,
      usage: live.usage,
      runId: live.runId,
    };
    if (status === 'incomplete') result.limit = 'maxTurns';
    live.emit?.({ type: 'done', result });
    return result;
  }

  private async save(live: LiveRun, state: RunState): Promise<void> {
    const version = live.version + 1;
    const saved = await this.coordinator.store.saveRun({ runId: live.runId, version, state: state as unknown as Record<string, unknown>, updatedAt: new Date().toISOString() });
    if (!saved) {
      throw new RunConflictError(
        live.runId,
        version === 1 ? 'a checkpoint with this runId already exists; give each run its own runId' : `checkpoint version ${live.version} was changed by another process`,
      );
    }
    live.version = version;
  }

  /**
   * A checkpointed run whose model call failed is saved as `failed` with its (balanced)
   * transcript, so `recover` can continue it: the answers that led here are spent.
   */
  private async saveFailure(live: LiveRun, error: unknown): Promise<void> {
    const state = snapshot(live, 'failed', undefined);
    state.error = messageOf(error);
    try {
      await this.save(live, state);
    } catch {
      // The model error is what the caller must see; the checkpoint stays `running` (see recover's `force`).
    }
  }

  private async continueRun(answersIn: Answer | readonly Answer[], options: ResumeOptions, emit: Emit | undefined): Promise<RunResult> {
    const answers = checkAnswers(answersIn);
    const calls = await Promise.all(answers.map((answer) => this.coordinator.get(answer.id)));
    const runId = runOf(answers, calls);
    const checkpoint = await this.coordinator.store.loadRun(runId);
    if (!checkpoint) throw new RunNotFoundError(runId);
    const state = readRunState(runId, checkpoint.state);
    const open = new Map<string, HaltedCall>();
    for (const [i, answer] of answers.entries()) {
      const halted = state.halted?.calls.find((entry) => entry.pendingId === answer.id);
      if (!halted) throw alreadySettled(runId, answer.id, calls[i] as SuspendedCall);
      open.set(answer.id, halted);
    }

    // Each replay is exactly-once in the coordinator; settle them all before merging, so
    // one failed answer never loses the outcome of another.
    const settled = await Promise.allSettled(
      answers.map((answer) => this.coordinator.resolve(answer, callContext(options.context, options.signal, (open.get(answer.id) as HaltedCall).call.id))),
    );
    const outcomes = new Map<string, ToolResult>();
    let firstError: unknown;
    settled.forEach((entry, i) => {
      if (entry.status === 'fulfilled') outcomes.set((answers[i] as Answer).id, entry.value);
      else firstError ??= entry.reason;
    });
    if (outcomes.size === 0) throw firstError;

    const merged = await this.merge(runId, outcomes);
    if (emit) {
      for (const [id, result] of outcomes) {
        const { call } = open.get(id) as HaltedCall;
        if (!merged.rejected.includes(id)) emit({ type: 'tool_result', callId: call.id, name: call.name, result });
      }
    }
    if (!merged.continues) {
      if (firstError !== undefined) throw firstError;
      if (merged.applied === 0) {
        const id = merged.rejected[0] as string;
        throw new AlreadyResolvedError(id, (await this.coordinator.get(id))?.status ?? 'resolved');
      }
      const result = pendingResult(runId, merged.state);
      emit?.({ type: 'done', result });
      return result;
    }

    return this.loop(this.liveFrom(runId, merged.state, merged.version, options, emit));
  }

  private async recoverRun(runId: string, options: ResumeOptions & { force?: boolean }, emit: Emit | undefined): Promise<RunResult> {
    if (typeof runId !== 'string' || runId === '') throw new InvalidArgumentError('recover needs a runId');
    const checkpoint = await this.coordinator.store.loadRun(runId);
    if (!checkpoint) throw new RunNotFoundError(runId);
    const state = readRunState(runId, checkpoint.state);
    if (state.phase === 'halted') {
      const open = (state.halted?.calls ?? []).filter((entry) => entry.pendingId).map((entry) => entry.pendingId);
      throw new InvalidResumeError(`run ${runId} is waiting for answers to ${open.join(', ')}: resume it with them`);
    }
    if (state.phase === 'done' || state.phase === 'incomplete') throw new InvalidResumeError(`run ${runId} is already ${state.phase}`);
    if (state.phase === 'running' && !options.force) {
      throw new RunConflictError(runId, 'another process is continuing it; pass { force: true } only if that process is gone');
    }
    state.phase = 'running';
    delete state.error;
    const version = checkpoint.version + 1;
    const saved = await this.coordinator.store.saveRun({ runId, version, state: state as unknown as Record<string, unknown>, updatedAt: new Date().toISOString() });
    if (!saved) throw new RunConflictError(runId, 'another process took it over first');
    return this.loop(this.liveFrom(runId, state, version, options, emit));
  }

  /** The working state of a checkpointed run, with the halted turn's results (if any) fed in call order. */
  private liveFrom(runId: string, state: RunState, version: number, options: ResumeOptions, emit: Emit | undefined): LiveRun {
    const live: LiveRun = {
      runId,
      messages: state.messages,
      toolCalls: state.toolCalls,
      turns: state.turns,
      usage: state.usage,
      text: state.text,
      version,
      tools: this.currentTools(),
      signal: options.signal,
      context: options.context,
      emit,
    };
    const halted = state.halted;
    if (halted) {
      feed(
        live,
        halted.calls.map((entry) => entry.call),
        halted.calls.map((entry) => entry.result),
        halted.turn,
      );
    }
    return live;
  }

  /**
   * Writes outcomes into the checkpoint with compare-and-set: on a version conflict (another
   * process resumed a sibling meanwhile) reload and merge again, so nobody's result is lost.
   * The writer whose merge closes the last open call takes the run (`continues`).
   */
  private async merge(runId: string, outcomes: Map<string, ToolResult>): Promise<{ state: RunState; version: number; applied: number; rejected: string[]; continues: boolean }> {
    for (let attempt = 0; attempt < MAX_MERGE_ATTEMPTS; attempt++) {
      const checkpoint = await this.coordinator.store.loadRun(runId);
      if (!checkpoint) throw new RunNotFoundError(runId);
      const state = readRunState(runId, checkpoint.state);
      let applied = 0;
      const rejected: string[] = [];
      for (const [id, outcome] of outcomes) {
        const entry = state.phase === 'halted' ? state.halted?.calls.find((call) => call.pendingId === id) : undefined;
        if (!entry) {
          rejected.push(id);
          continue;
        }
        entry.result = outcome;
        delete entry.pendingId;
        applied++;
      }
      if (applied === 0) return { state, version: checkpoint.version, applied, rejected, continues: false };
      const continues = (state.halted as NonNullable<RunState['halted']>).calls.every((call) => call.pendingId === undefined);
      if (continues) state.phase = 'running';
      const version = checkpoint.version + 1;
      const saved = await this.coordinator.store.saveRun({ runId, version, state: state as unknown as Record<string, unknown>, updatedAt: new Date().toISOString() });
      if (saved) return { state, version, applied, rejected, continues };
    }
    throw new RunConflictError(runId, `could not save the checkpoint after ${MAX_MERGE_ATTEMPTS} conflicting writes`);
  }

  private streamed(callerSignal: AbortSignal | undefined, body: (emit: Emit, signal: AbortSignal) => Promise<RunResult>): AsyncGenerator<RunEvent> {
    const queue = new EventQueue<RunEvent>();
    const stop = new AbortController();
    const signal = callerSignal ? AbortSignal.any([callerSignal, stop.signal]) : stop.signal;
    async function* events(): AsyncGenerator<RunEvent> {
      body((event) => queue.push(event), signal).then(
        () => queue.close(),
        (error: unknown) => queue.fail(error),
      );
      try {
        yield* queue;
      } finally {
        // A consumer that stops early ends the run: the model call aborts, tools see the signal.
        if (!stop.signal.aborted) stop.abort(new DOMException('the stream consumer stopped reading', 'AbortError'));
      }
    }
    return events();
  }

  private currentTools(): readonly ModelTool[] {
    const tools = this.toolkit.tools();
    const offered = this.offeredTools;
    if (offered.length === tools.length && offered.every((tool, i) => tool === tools[i])) return offered;
    this.offeredTools = tools;
    return tools;
  }
}

/** Appends one tool result per call, in call order, and records the calls. */
function feed(live: LiveRun, calls: readonly ToolCall[], results: readonly ToolResult[], turn: number): void {
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as ToolCall;
    const result = results[i] as ToolResult;
    live.messages.push({ role: 'tool', callId: call.id, name: call.name, content: result.output, isError: result.isError });
    live.toolCalls.push({ id: call.id, name: call.name, arguments: call.arguments, result, turn });
  }
}

function snapshot(live: LiveRun, phase: RunState['phase'], halted: RunState['halted']): RunState {
  const state: RunState = {
    format: RUN_STATE_FORMAT,
    phase,
    messages: live.messages,
    toolCalls: live.toolCalls,
    turns: live.turns,
    usage: live.usage,
    text: live.text,
  };
  if (halted) state.halted = halted;
  return state;
}

function pendingResult(runId: string, state: RunState): RunResult {
  const halted = state.halted?.calls ?? [];
  const pendings: PendingRequest[] = [];
  for (const entry of halted) {
    const request = entry.pendingId === undefined ? undefined : pendingOf(entry.result);
    if (request) pendings.push(request);
  }
  return {
    status: 'pending',
    text: state.text,
    messages: state.messages,
    toolCalls: [...state.toolCalls, ...halted.map((entry) => ({ id: entry.call.id, name: entry.call.name, arguments: entry.call.arguments, result: entry.result, turn: state.halted?.turn ?? state.turns }))],
    turns: state.turns,
    usage: state.usage,
    runId,
    pending: pendings[0],
    pendings,
  };
}

function callContext(context: object | undefined, signal: AbortSignal | undefined, callId: string): AgentToolContext {
  const ctx: AgentToolContext = { ...context, callId };
  if (signal) ctx.signal = signal;
  return ctx;
}

function parseArguments(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, problem: `arguments are not valid JSON (${messageOf(error)}): ${text.length > 200 ? `${text.slice(0, 200)}...` : text}` };
  }
}

function checkAnswers(input: Answer | readonly Answer[]): Answer[] {
  const answers = Array.isArray(input) ? [...(input as readonly Answer[])] : [input as Answer];
  if (answers.length === 0) throw new InvalidResumeError('resume needs at least one answer');
  const seen = new Set<string>();
  for (const answer of answers) {
    const problem = answerProblem(answer);
    if (problem) throw new InvalidAnswerError(`invalid answer: ${problem}`);
    if (seen.has(answer.id)) throw new InvalidResumeError(`answer ${answer.id} is given twice`);
    seen.add(answer.id);
  }
  return answers;
}

/** The one run every answer belongs to. */
function runOf(answers: readonly Answer[], calls: ReadonlyArray<SuspendedCall | undefined>): string {
  const runs = new Set<string>();
  for (const [i, answer] of answers.entries()) {
    const call = calls[i];
    if (!call) throw new UnknownSuspensionError(answer.id);
    if (call.runId === undefined) throw new InvalidResumeError(`suspension ${answer.id} belongs to no agent run: resolve it with ResumeCoordinator.resolve`);
    runs.add(call.runId);
  }
  if (runs.size > 1) throw new InvalidResumeError(`the answers belong to different runs (${[...runs].join(', ')}): resume one run at a time`);
  return [...runs][0] as string;
}

/** Why an answer's suspension is no longer open in the run's checkpoint. */
function alreadySettled(runId: string, id: string, call: SuspendedCall): Error {
  if (isSettled(call.status)) return new AlreadyResolvedError(id, call.status);
  // The store still calls it open, yet the run has moved on: a concurrent resume is finishing it.
  if (call.status === 'resolving') return new AlreadyResolvedError(id, call.status);
  return new RunCheckpointError(runId, `suspension ${id} is ${call.status} in the store but not open in the checkpoint`);
}

function copyMessage(message: ChatMessage): ChatMessage {
  if (typeof message !== 'object' || message === null || !['user', 'assistant', 'tool'].includes((message as ChatMessage).role)) {
    throw new InvalidArgumentError('every transcript entry needs a role of "user", "assistant" or "tool"');
  }
  return message.role === 'assistant' && message.toolCalls ? { ...message, toolCalls: message.toolCalls.map((call) => ({ ...call })) } : { ...message };
}
