import { IsString, MaxLength, MinLength } from 'class-validator';
import { randomUUID } from 'node:crypto';
import type { ClassType } from '../../decorators/types';
import { failure, pending } from '../../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../../results/wire';
import type { Audit } from '../../suspension/audit';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import { systemAudit } from '../../suspension/authority';
import { subAgentOriginOf, type SubAgentOrigin } from '../../suspension/origin';
import type { Principal } from '../../suspension/audit';
import { defineTool, type FunctionTool } from '../../toolkit/define-tool';
import type { ChatMessage, Usage } from '../../models/types';
import { RUN_BUDGET, RUN_PRINCIPAL, type AgentToolContext, type Emit } from './live-run';
import type { Budget, Spend } from './budget';
import type { RunEvent, RunResult, RunStop } from './types';

/**
 * Where a sub-agent call sends its child's events when the calling run is streamed: set on
 * the call's context by the runner, under a symbol so no host key can collide with it.
 */
export const SUB_AGENT_EVENTS = Symbol.for('toolnexus:sub-agent-events');

/** The default arguments of a sub-agent tool: the message the sub-agent is given. */
export class SubAgentInput {
  /** What the sub-agent is asked, in the calling model's words. */
  @IsString()
  @MinLength(1)
  @MaxLength(100_000)
  input!: string;
}

/** Options of `AgentRunner.asTool`. */
export interface SubAgentToolOptions {
  /** The tool's name, as the calling model sees it. */
  name: string;
  /** What the sub-agent does, for the calling model. */
  description: string;
  /**
   * The arguments DTO. Default {@link SubAgentInput} (`{ input: string }`). The sub-agent's
   * user message is `input` when the DTO has a string `input`, else the arguments as JSON.
   */
  args?: ClassType;
}

/**
 * What a sub-agent call's result carries in `metadata.subAgent` (kept in the parent's
 * checkpoint with the call): the child run, its transcript and its usage, which the parent
 * run adds to its own.
 */
export interface SubAgentRecord {
  runId: string;
  status: RunResult['status'];
  turns: number;
  usage: Usage;
  messages: ChatMessage[];
  /** Why the child was stopped, when a guardrail, its budget or a cancel ended it. */
  stop?: RunStop;
  /** What the child spent besides tokens (cost, tool calls), when it counted: the caller adds it. */
  spend?: Spend;
}

export type { SubAgentOrigin } from '../../suspension/origin';

/** How a sub-agent's child run is started. */
interface ChildRunOptions {
  runId: string;
  context?: object;
  signal?: AbortSignal;
  principal?: Principal;
  /** What is left of the calling run's budget. */
  [RUN_BUDGET]?: Budget;
}

/** What a sub-agent call needs of the runner it runs (an `AgentRunner`). */
export interface SubAgentHost {
  run(input: string, options: ChildRunOptions): Promise<RunResult>;
  stream(input: string, options: ChildRunOptions): AsyncGenerator<RunEvent>;
  resume(answer: Answer, options: { context?: object; signal?: AbortSignal; audit?: Audit }): Promise<RunResult>;
  resumeStream(answer: Answer, options: { context?: object; signal?: AbortSignal; audit?: Audit }): AsyncGenerator<RunEvent>;
  cancel(runId: string, options: { reason?: string }): Promise<RunResult>;
}

/**
 * Runs `runner` as the tool call `ctx.callId` of run `ctx.runId`: its child run is named
 * after both (`<runId>/<callId>`), so a replay finds it again. A child that halts makes
 * the call suspend with the child's first open request (id `sub-<child's id>`, its origin
 * in `data.subAgent`); the replay with the answer resumes the child exactly where it
 * stopped (the child's own suspension is claimed once, as any) and returns its answer,
 * or suspends again with the child's next request.
 */
export async function runSubAgent(
  runner: SubAgentHost,
  name: string,
  args: object,
  ctx: AgentToolContext | undefined,
): Promise<ToolResult> {
  const host = hostContext(ctx);
  const signal = ctx?.signal;
  const origin = subAgentOriginOf(ctx?.replay?.request);
  const emit = (ctx as { [SUB_AGENT_EVENTS]?: Emit } | undefined)?.[SUB_AGENT_EVENTS];
  // The call's signal (the caller cancelled, a timeout, an MCP client's cancellation) cancels the
  // child run: it ends `cancelled`, checkpointed so, rather than failing.
  const common = host ? { context: host } : {};
  if (ctx?.answer && origin) {
    const answeredBy = ctx.answer.answeredBy;
    const answer: Answer = { id: origin.requestId, ok: true, ...(ctx.answer.data === undefined ? {} : { data: ctx.answer.data }) };
    const options = { ...common, ...(answeredBy ? { audit: { by: answeredBy } } : {}) };
    const result = await cancelledWith(runner, origin.runId, signal, () =>
      emit ? nested(name, runner.resumeStream(answer, options), emit) : runner.resume(answer, options),
    );
    return resultOf(name, origin.runId, result);
  }
  const runId = `${ctx?.runId ?? 'run'}/${ctx?.callId ?? randomUUID()}`;
  if (signal?.aborted) return failure(`the sub-agent ${name} was not started: its call was cancelled`);
  const message = messageOf(args);
  // The child run is made on behalf of the caller's principal: its requests record them too.
  const principal = (ctx as { [RUN_PRINCIPAL]?: Principal } | undefined)?.[RUN_PRINCIPAL];
  // What is left of the caller's budget bounds the child's: its spending is the caller's.
  const inherited = (ctx as { [RUN_BUDGET]?: Budget } | undefined)?.[RUN_BUDGET];
  const started = { ...common, runId, ...(principal ? { principal } : {}), ...(inherited ? { [RUN_BUDGET]: inherited } : {}) };
  const result = await cancelledWith(runner, runId, signal, () =>
    emit ? nested(name, runner.stream(message, started), emit) : runner.run(message, started),
  );
  return resultOf(name, runId, result);
}

/** Runs the child with `signal` cancelling it (`runner.cancel`) while it runs. */
async function cancelledWith(
  runner: SubAgentHost,
  runId: string,
  signal: AbortSignal | undefined,
  body: () => Promise<RunResult>,
): Promise<RunResult> {
  if (!signal) return body();
  const cancel = () => void runner.cancel(runId, { reason: 'the call that ran it was cancelled' }).catch(() => undefined);
  signal.addEventListener('abort', cancel, { once: true });
  try {
    return await body();
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

/** Forwards a child's events under its path, and returns its result. */
async function nested(name: string, events: AsyncGenerator<RunEvent>, emit: Emit): Promise<RunResult> {
  for await (const event of events) {
    if (event.type === 'done') return event.result;
    emit({ ...event, path: [name, ...(event.path ?? [])] });
  }
  throw new Error(`the sub-agent ${name} stopped streaming without a result`);
}

/** The child's outcome as the parent call's result. */
function resultOf(name: string, runId: string, result: RunResult): ToolResult {
  if (result.status === 'halted') {
    const request = result.pending;
    const inner = subAgentOriginOf(request);
    const origin: SubAgentOrigin = { path: [name, ...(inner?.path ?? [])], runId, requestId: request.id };
    // No `editable`: the runner resumes the child with the answer's verdict and drops edited
    // arguments, so no door may offer (or accept) an edit of a surfaced request.
    const { editable: _dropped, ...data } = request.data ?? {};
    const up: Omit<PendingRequest, 'id'> & { id: string } = {
      id: `sub-${request.id}`,
      kind: request.kind,
      prompt: request.prompt,
      data: { ...data, subAgent: origin },
    };
    if (request.url !== undefined) up.url = request.url;
    if (request.expiresAt !== undefined) up.expiresAt = request.expiresAt;
    return pending(up);
  }
  const record: SubAgentRecord = { runId, status: result.status, turns: result.turns, usage: result.usage, messages: result.messages };
  if (result.spend) record.spend = result.spend;
  if (result.status === 'incomplete')
    return failure(`the sub-agent ${name} stopped after ${result.turns} turns without an answer`, { subAgent: record });
  if (result.stop) return failure(`the sub-agent ${name} was stopped: ${result.status}`, { subAgent: { ...record, stop: result.stop } });
  return { output: result.text, isError: false, metadata: { subAgent: record } };
}

/** The child's usage a sub-agent call's result carries, to add to the parent's. */
export function subAgentUsage(result: ToolResult): Usage | undefined {
  const record = result.metadata?.subAgent as Partial<SubAgentRecord> | undefined;
  const usage = record?.usage;
  if (typeof usage !== 'object' || usage === null || typeof usage.inputTokens !== 'number' || typeof usage.outputTokens !== 'number')
    return undefined;
  return usage;
}

/** Longest chain of sub-agents a refusal is passed down. */
const MAX_DEPTH = 32;

/**
 * A surfaced request was refused: the parent's call is settled without running the
 * sub-agent tool, so the child's own request (and its child's, down to the agent that asked)
 * is cancelled, best effort, rather than left pending in the store. The child runs stay halted.
 */
export async function cancelChildren(
  coordinator: ResumeCoordinator,
  request: PendingRequest | undefined,
  reason: string | undefined,
): Promise<void> {
  let origin = subAgentOriginOf(request);
  for (let depth = 0; origin && depth < MAX_DEPTH; depth++) {
    const child = await coordinator.get(origin.requestId).catch(() => undefined);
    await coordinator
      .cancel(origin.requestId, `the request it surfaced in the calling run was ${reason ?? 'refused'}`, systemAudit())
      .catch(() => undefined);
    origin = subAgentOriginOf(child?.request);
  }
}

/** The child's user message: the `input` string of the arguments, else the arguments as JSON. */
function messageOf(args: object): string {
  const input = (args as { input?: unknown }).input;
  return typeof input === 'string' ? input : JSON.stringify(args);
}

/** The host's own context, without what the library adds to a call's. */
function hostContext(ctx: AgentToolContext | undefined): object | undefined {
  if (!ctx) return undefined;
  const { callId: _c, runId: _r, answer: _a, replay: _p, approval: _v, signal: _s, timeout: _t, ...host } = ctx;
  return Object.keys(host).length === 0 ? undefined : host;
}

/** The tool `runner.asTool(options)` registers. */
export function subAgentTool(runner: SubAgentHost, options: SubAgentToolOptions): FunctionTool {
  const { name, description, args = SubAgentInput } = options;
  return defineTool({ name, description, args, run: (input: object, ctx?: AgentToolContext) => runSubAgent(runner, name, input, ctx) });
}

/** Why a sub-agent call's child run was stopped, when a guardrail, its budget or a cancel ended it. */
export function subAgentStop(result: ToolResult): RunStop | undefined {
  const stop = (result.metadata?.subAgent as Partial<SubAgentRecord> | undefined)?.stop;
  return typeof stop === 'object' && stop !== null && typeof stop.status === 'string' ? stop : undefined;
}

/** Adds what a sub-agent call's child spent (cost, tool calls) to the caller's spending. */
export function addChildSpend(spend: Spend, result: ToolResult): void {
  const child = (result.metadata?.subAgent as Partial<SubAgentRecord> | undefined)?.spend;
  if (typeof child !== 'object' || child === null) return;
  if (typeof child.costUsd === 'number') spend.costUsd += child.costUsd;
  if (typeof child.toolCalls === 'number') spend.toolCalls += child.toolCalls;
}
