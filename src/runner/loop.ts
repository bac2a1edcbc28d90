import { ModelResponseError, OutputValidationError, RunCheckpointError } from '../errors';
import { messageOf } from '../errors/message';
import { failure, pendingOf } from '../results/helpers';
import type { PendingRequest, ToolResult } from '../results/wire';
import type { RefusalStatus, WaitFor } from '../suspension/answers';
import type { ResumeCoordinator } from '../suspension/coordinator';
import type { ToolContext } from '../toolkit/context';
import { callStatus } from './call-status';
import { pendingResult, snapshot, type Checkpoints } from './checkpoints';
import { checkOutput, FINAL_ANSWER_TOOL, keptOutput, offeredTools, repairPrompt, textReminder, type OutputRun } from './output';
import { handoffOf } from './handoff';
import { SUB_AGENT_EVENTS, subAgentUsage } from './sub-agent';
import { runStep, startJournal, type Durability, type Journal } from './durable';
import type { HaltedCall, RunStep } from './state';
import { traceChat, type RunTrace } from './agent-spans';
import type { Telemetry } from '../telemetry/telemetry';
import { addUsage, copyUsage } from './usage';
import type { AfterModel, BeforeModel, ModelCall } from './transcript/hooks';
import type {
  ModelMetricEvent,
  RunEvent,
  RunResult,
  RunStatus,
  ToolCallRecord
} from './types';
import type { AssistantMessage, ChatMessage, ChatModel, ModelRequest, ModelResponse, ModelTool, ToolCall, Usage } from '../models/types';

/**
 * The context a tool receives from the runner: the run's `context`, plus `signal`, the
 * provider's `callId` and the `runId` of the run that made the call (a sub-agent tool names
 * its child run after both).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the neutral element of `&`
export type AgentToolContext<TState extends object = {}> = ToolContext<TState & { callId: string; runId?: string }>;

/** Where a run's events go (the stream), when someone listens. */
export type Emit = (event: RunEvent) => void;

/** What the loop needs from its runner. */
export interface LoopParts {
  model: ChatModel;
  coordinator: ResumeCoordinator;
  checkpoints: Checkpoints;
  systemPrompt?: string;
  maxTurns: number;
  waitFor?: WaitFor;
  /** Told of every model call (provider, turn, usage, duration). */
  onMetric?: (event: ModelMetricEvent) => void;
  /** When runs are checkpointed: on halt only (default), or after every step. */
  durability?: Durability;
  /** This agent's name, when it takes part in handoffs. */
  agent?: string;
  /** The parts of the agent named `name`, this one or one reachable by handoffs; undefined when unknown. */
  agentParts?(name: string): (LoopParts & { tools(): readonly ModelTool[] }) | undefined;
  /** OpenTelemetry spans and metrics of runs and model calls. */
  telemetry: Telemetry;
  /** Rewrites each request before it is sent (context management, docs/chat.md). */
  beforeModel?: BeforeModel;
  /** Sees each answer before the run uses it. */
  afterModel?: AfterModel;
}

/** The working state of one run while this process drives it. */
export interface LiveRun {
  runId: string;
  messages: ChatMessage[];
  toolCalls: ToolCallRecord[];
  turns: number;
  usage: Usage;
  /** Each model call's counts, in turn order. */
  turnUsage: Usage[];
  text: string;
  /** The typed answer the run asks for, when it asks for one. */
  output?: OutputRun;
  /** The checkpoint version this process last read or wrote; 0 when the run was never checkpointed. */
  version: number;
  tools: readonly ModelTool[];
  signal?: AbortSignal;
  context?: object;
  emit?: Emit;
  /** Stops renewing the driver lease (waiting for a renewal in flight); set while a resumed run is driven. */
  stopDriving?: () => Promise<void>;
  /** With durable steps: writes the run after each step while this process drives it. */
  journal?: Journal;
  /** With durable steps: the turn whose calls are running. */
  step?: RunStep;
  /** The agent holding the conversation, once a handoff moved it (the runner's own agent until then). */
  agent?: string;
  /** The run's span while a tracer records it; its `traceparent` is checkpointed when the run halts. */
  trace?: RunTrace;
}

/**
 * The turn loop: ask the model, run every tool call of the turn in parallel, feed the
 * results back in call order, and repeat until the model answers, a limit is reached, or a
 * call suspends with no one to answer it inline (the run halts, checkpointed).
 */
export async function runLoop(first: LoopParts, live: LiveRun): Promise<RunResult> {
  let parts = first;
  if (parts.durability === 'step' && !live.journal) await startJournal(parts, live);
  for (;;) {
    parts = holder(parts, live);
    if (live.turns >= parts.maxTurns) return end(parts, live, 'incomplete');
    let response: ModelResponse;
    try {
      live.signal?.throwIfAborted();
      response = await ask(parts, live);
    } catch (error) {
      await live.stopDriving?.();
      if (live.version > 0) await parts.checkpoints.saveFailure(live, error);
      throw error;
    }
    live.turns++;
    const usage = copyUsage(response.usage);
    // (the agent that answered is the one that holds the conversation; a handoff below moves it)
    addUsage(live.usage, usage);
    live.turnUsage.push(usage);
    live.text = response.text;
    const calls = response.toolCalls;
    live.messages.push(assistantTurn(response));
    const journal = live.journal;
    if (journal && calls.length > 0) {
      // The response is recorded before any call runs: a recovery never asks the model for it again.
      live.step = { turn: live.turns, calls: calls.map((call) => ({ call })) };
      try {
        await journal.record();
      } catch (error) {
        await live.stopDriving?.();
        throw error;
      }
    }
    if (live.output && (calls.length === 0 || (!live.output.native && calls.length === 1 && calls[0]?.name === FINAL_ANSWER_TOOL))) {
      if (await answered(parts, live, live.output, response)) return end(parts, live, 'done');
      continue;
    }
    if (calls.length === 0) return end(parts, live, 'done');
    if (live.emit) for (const call of calls) live.emit({ type: 'tool_call', call });
    let results: ToolResult[];
    const trace = live.trace;
    const runCalls = (): Promise<ToolResult[]> =>
      journal && live.step ? runStep(parts, live, journal, live.step) : Promise.all(calls.map((call) => callTool(parts, live, call)));
    try {
      results = await (trace ? trace.tracing.within(trace.context, runCalls) : runCalls());
    } catch (error) {
      // A step that cannot be recorded (the store is down, another process took the run over):
      // stop renewing the lease, so the run can be recovered from its last recorded step.
      await live.stopDriving?.();
      throw error;
    }
    live.step = undefined;
    if (results.some((result) => pendingOf(result) !== undefined)) return halt(parts, live, calls, results);
    feed(live, calls, results, live.turns);
  }
}

/**
 * The model gave its typed answer (as text, or as the one final-answer call). True when it
 * validates; otherwise the problem goes back to the model for another round, until the
 * repairs run out.
 *
 * @throws {@link OutputValidationError} the last repair round failed too.
 */
async function answered(parts: LoopParts, live: LiveRun, output: OutputRun, response: ModelResponse): Promise<boolean> {
  const call = response.toolCalls[0];
  let problem: string;
  let answer: string;
  if (!output.native && call === undefined) {
    answer = response.text;
    problem = `it answered in text instead of calling ${FINAL_ANSWER_TOOL}`;
  } else {
    answer = call ? call.arguments : response.text;
    const checked = await checkOutput(output, answer);
    if (checked.ok) {
      output.value = { plain: checked.plain, instance: checked.instance };
      // The final call gets its result, so the transcript stays one any provider accepts.
      if (call) live.messages.push({ role: 'tool', callId: call.id, name: call.name, content: 'Answer accepted.', isError: false });
      return true;
    }
    problem = checked.problem;
  }
  // The feedback is kept even when the repairs are spent: a `recover` then asks again from it.
  const feedback = call || output.native ? repairPrompt(output, problem) : textReminder();
  if (call) live.messages.push({ role: 'tool', callId: call.id, name: call.name, content: feedback, isError: true });
  else live.messages.push({ role: 'user', content: feedback });
  if (output.repairs >= output.maxRepairs) {
    const error = new OutputValidationError(live.runId, output.format.name, problem, keptOutput(answer), output.repairs + 1);
    await live.stopDriving?.();
    if (live.version > 0) await parts.checkpoints.saveFailure(live, error);
    throw error;
  }
  output.repairs++;
  return false;
}

/** The model's turn as the transcript keeps it, with the provider items the next request must carry back. */
function assistantTurn(response: ModelResponse): AssistantMessage {
  const message: AssistantMessage = { role: 'assistant', content: response.text };
  if (response.toolCalls.length > 0) message.toolCalls = response.toolCalls;
  if (response.items !== undefined && response.items.length > 0) message.items = response.items;
  return message;
}

/**
 * Appends one tool result per call, in call order, and records the calls; `refusals[i]`,
 * where known, is how call `i`'s answer refused it.
 */
export function feed(
  live: LiveRun,
  calls: readonly ToolCall[],
  results: readonly ToolResult[],
  turn: number,
  refusals: ReadonlyArray<RefusalStatus | undefined> = [],
): void {
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as ToolCall;
    const result = results[i] as ToolResult;
    live.messages.push({ role: 'tool', callId: call.id, name: call.name, content: result.output, isError: result.isError });
    const childUsage = subAgentUsage(result);
    if (childUsage) addUsage(live.usage, childUsage);
    const to = handoffOf(result);
    if (to !== undefined) live.agent = to;
    live.toolCalls.push({ id: call.id, name: call.name, arguments: call.arguments, result, status: callStatus(result, refusals[i]), turn });
  }
}

/**
 * The parts of the agent holding the conversation: after a handoff, the target's model,
 * instructions and tools (the tools offered change with it).
 */
export function holder(parts: LoopParts, live: LiveRun): LoopParts {
  if (live.agent === undefined || live.agent === parts.agent) return parts;
  const next = parts.agentParts?.(live.agent);
  if (!next)
    throw new RunCheckpointError(
      live.runId,
      `the conversation is held by agent ${JSON.stringify(live.agent)}, which this runner cannot reach`,
    );
  live.tools = offeredTools(next.tools(), live.output);
  return next;
}

/** The context each call gets: a shallow copy of the run's, plus the run's signal and the call's id. */
export function callContext(
  context: object | undefined,
  signal: AbortSignal | undefined,
  callId: string,
  runId?: string,
): AgentToolContext {
  const ctx: AgentToolContext = runId === undefined ? { ...context, callId } : { ...context, callId, runId };
  if (signal) ctx.signal = signal;
  return ctx;
}

async function ask(parts: LoopParts, live: LiveRun): Promise<ModelResponse> {
  let request: ModelRequest = { system: parts.systemPrompt, messages: live.messages.slice(), tools: live.tools, signal: live.signal };
  if (live.output?.native) request.output = live.output.format;
  let call: ModelCall | undefined;
  if (parts.beforeModel || parts.afterModel) {
    call = await hookedCall(parts.beforeModel, live, request);
    request = { ...call, signal: live.signal };
  }
  const { model } = parts;
  const emit = live.emit;
  const started = performance.now();
  const streamed = emit !== undefined && typeof model.stream === 'function';
  const invoke = (): Promise<ModelResponse> => callModel(model, request, streamed, emit);
  let response = live.trace ? await traceChat(live.trace, parts.systemPrompt, request.messages, invoke) : await invoke();
  if (parts.afterModel && call) response = (await parts.afterModel(response, call)) ?? response;
  if (parts.onMetric) {
    // A metric sink that throws must not change (or fail) the run.
    try {
      parts.onMetric({
        event: 'model',
        provider: model.provider,
        runId: live.runId,
        turn: live.turns + 1,
        usage: copyUsage(response.usage),
        ms: performance.now() - started,
        streamed,
      });
    } catch {
      // dropped: the run goes on
    }
  }
  return response;
}

/** One model call, streamed when someone listens and the model can. */
async function callModel(model: ChatModel, request: ModelRequest, streamed: boolean, emit: Emit | undefined): Promise<ModelResponse> {
  let response: ModelResponse | undefined;
  if (!streamed || !model.stream) {
    response = await model.complete(request);
    if (emit && response.text !== '') emit({ type: 'text', delta: response.text });
    return response;
  }
  for await (const event of model.stream(request)) {
    if (event.type === 'text') emit?.({ type: 'text', delta: event.delta });
    else if (event.type === 'reasoning') emit?.({ type: 'reasoning', delta: event.delta });
    else if (event.type === 'response') response = event.response;
  }
  if (!response) throw new ModelResponseError(model.provider, 'the stream ended without a response');
  return response;
}

/** The request as `beforeModel` gets it (a copy of the transcript) and as it returned it. */
async function hookedCall(beforeModel: BeforeModel | undefined, live: LiveRun, request: ModelRequest): Promise<ModelCall> {
  const call: ModelCall = { runId: live.runId, turn: live.turns + 1, messages: structuredClone(live.messages), tools: request.tools };
  if (request.system !== undefined) call.system = request.system;
  if (request.output) call.output = request.output;
  if (!beforeModel) return call;
  const changed = (await beforeModel(call)) ?? call;
  if (typeof changed !== 'object' || changed === null || !Array.isArray(changed.messages) || !Array.isArray(changed.tools))
    throw new ModelResponseError('beforeModel', 'the hook returned something that is not a model request { messages, tools }');
  return changed;
}

/**
 * One call, on the one path every call takes: the model's raw arguments go to the
 * coordinator, which runs them through the toolkit (parsing, validation, hooks, metrics)
 * and answers inline or records the suspension. Never rejects for the model's or the
 * tool's doing (only for a store that cannot record).
 */
export async function callTool(parts: LoopParts, live: LiveRun, call: ToolCall): Promise<ToolResult> {
  if (live.output && !live.output.native && call.name === FINAL_ANSWER_TOOL) {
    const result = failure(`call ${FINAL_ANSWER_TOOL} on its own, once every other tool result is in`);
    live.emit?.({ type: 'tool_result', callId: call.id, name: call.name, result });
    return result;
  }
  const ctx = callContext(live.context, live.signal, call.id, live.runId);
  const emit = live.emit;
  if (emit) Object.assign(ctx, { [SUB_AGENT_EVENTS]: emit });
  const result = await parts.coordinator.execute(call.name, call.arguments, ctx, {
    callId: call.id,
    runId: live.runId,
    waitFor: parts.waitFor,
    // Inline answers are announced before `waitFor` runs, so a channel can push the link at once.
    onPending: emit ? (request: PendingRequest) => emit({ type: 'pending', callId: call.id, request }) : undefined,
  });
  if (live.emit) {
    const request = pendingOf(result);
    live.emit(request ? { type: 'pending', callId: call.id, request } : { type: 'tool_result', callId: call.id, name: call.name, result });
  }
  return result;
}

/** Every call of the turn has finished; the suspended ones are recorded. Checkpoint and stop. */
export async function halt(parts: LoopParts, live: LiveRun, calls: ToolCall[], results: ToolResult[]): Promise<RunResult> {
  const halted: HaltedCall[] = calls.map((call, i) => {
    const result = results[i] as ToolResult;
    const request = pendingOf(result);
    return request ? { call, result, pendingId: request.id } : { call, result };
  });
  const state = snapshot(live, 'halted', { turn: live.turns, calls: halted });
  await live.stopDriving?.();
  try {
    await parts.checkpoints.save(live, state);
  } catch (error) {
    // No checkpoint means no run could ever continue these: settle them rather than leave orphans.
    await Promise.allSettled(
      halted.filter((entry) => entry.pendingId).map((entry) => parts.coordinator.cancel(entry.pendingId as string, messageOf(error))),
    );
    throw error;
  }
  const result = pendingResult(live.runId, state);
  live.emit?.({ type: 'done', result });
  return result;
}

async function end(parts: LoopParts, live: LiveRun, status: Exclude<RunStatus, 'halted'>): Promise<RunResult> {
  await live.stopDriving?.();
  // A run that was never checkpointed stays out of the store: the common case costs no I/O.
  if (live.version > 0) await parts.checkpoints.save(live, snapshot(live, status, undefined));
  // Two literals rather than one spread of a shared base: V8 copies a spread object and then
  // adds the rest one by one, which was the single costliest line of a run (docs/performance.md).
  const { text, messages, toolCalls, turns, usage, turnUsage, runId } = live;
  const result: RunResult =
    status === 'incomplete'
      ? { text, messages, toolCalls, turns, usage, turnUsage, runId, status, limit: 'maxTurns' }
      : { text, messages, toolCalls, turns, usage, turnUsage, runId, status, output: live.output?.value?.instance };
  live.emit?.({ type: 'done', result });
  return result;
}
