import { IsString, MaxLength, MinLength } from 'class-validator';
import { randomUUID } from 'node:crypto';
import { toolOptionsOf } from '../decorators/tool.decorator';
import type { AnyClass, ClassType } from '../decorators/types';
import { failure, pending } from '../results/helpers';
import type { PendingRequest, ToolResult } from '../results/wire';
import { defineTool, type FunctionTool } from '../toolkit/define-tool';
import { defaultToolName } from '../toolkit/toolkit';
import type { AgentRunner } from './agent-runner';
import type { AgentToolContext } from './loop';
import type { ChatMessage, RunResult, Usage } from './types';

/** The default arguments of a sub-agent tool: the message the sub-agent is given. */
export class SubAgentInput {
  /** What the sub-agent is asked, in the calling model's words. */
  @IsString()
  @MinLength(1)
  @MaxLength(100_000)
  input!: string;
}

/** Options of {@link AgentRunner.asTool}. */
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
}

/**
 * Where a sub-agent's request came from, in `request.data.subAgent` of the request the
 * calling run surfaces: the sub-agent tools from the root down to the agent that asked
 * (`path`), the child run, and the child's own request id.
 */
export interface SubAgentOrigin {
  path: string[];
  runId: string;
  requestId: string;
}

/**
 * Runs `runner` as the tool call `ctx.callId` of run `ctx.runId`: its child run is named
 * after both (`<runId>/<callId>`), so a replay finds it again. A child that halts makes
 * the call suspend with the child's first open request (id `sub-<child's id>`, its origin
 * in `data.subAgent`); the replay with the answer resumes the child exactly where it
 * stopped (the child's own suspension is claimed once, as any) and returns its answer,
 * or suspends again with the child's next request.
 */
export async function runSubAgent(runner: AgentRunner, name: string, args: object, ctx: AgentToolContext | undefined): Promise<ToolResult> {
  const host = hostContext(ctx);
  const signal = ctx?.signal;
  const origin = originOf(ctx?.replay?.request);
  let result: RunResult;
  if (ctx?.answer && origin) {
    const answeredBy = ctx.answer.answeredBy;
    result = await runner.resume(
      { id: origin.requestId, ok: true, ...(ctx.answer.data === undefined ? {} : { data: ctx.answer.data }) },
      { ...(host ? { context: host } : {}), ...(signal ? { signal } : {}), ...(answeredBy ? { audit: { by: answeredBy } } : {}) },
    );
    return resultOf(name, origin.runId, result);
  }
  const runId = `${ctx?.runId ?? 'run'}/${ctx?.callId ?? randomUUID()}`;
  result = await runner.run(messageOf(args), { runId, ...(host ? { context: host } : {}), ...(signal ? { signal } : {}) });
  return resultOf(name, runId, result);
}

/** The child's outcome as the parent call's result. */
function resultOf(name: string, runId: string, result: RunResult): ToolResult {
  if (result.status === 'pending') {
    const request = result.pending;
    const inner = originOf(request);
    const origin: SubAgentOrigin = { path: [name, ...(inner?.path ?? [])], runId, requestId: request.id };
    const up: Omit<PendingRequest, 'id'> & { id: string } = {
      id: `sub-${request.id}`,
      kind: request.kind,
      prompt: request.prompt,
      data: { ...request.data, subAgent: origin },
    };
    if (request.url !== undefined) up.url = request.url;
    if (request.expiresAt !== undefined) up.expiresAt = request.expiresAt;
    return pending(up);
  }
  const record: SubAgentRecord = { runId, status: result.status, turns: result.turns, usage: result.usage, messages: result.messages };
  if (result.status === 'incomplete')
    return failure(`the sub-agent ${name} stopped after ${result.turns} turns without an answer`, { subAgent: record });
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

/** The sub-agent origin of a request the call surfaced, when it is one. */
function originOf(request: PendingRequest | undefined): SubAgentOrigin | undefined {
  const origin = request?.data?.subAgent as Partial<SubAgentOrigin> | undefined;
  if (typeof origin !== 'object' || origin === null) return undefined;
  if (typeof origin.runId !== 'string' || typeof origin.requestId !== 'string' || !Array.isArray(origin.path)) return undefined;
  return origin as SubAgentOrigin;
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
export function subAgentTool(runner: AgentRunner, options: SubAgentToolOptions): FunctionTool {
  const { name, description, args = SubAgentInput } = options;
  return defineTool({ name, description, args, run: (input: object, ctx?: AgentToolContext) => runSubAgent(runner, name, input, ctx) });
}

/**
 * A `@Tool` class that is a sub-agent: extend it, give it a runner (by constructor: a DI
 * container can inject one), and declare `@Tool({ name, description, args })` as for any tool.
 *
 * @example
 * ```ts
 * @Tool({ name: 'research', description: 'Researches a question', args: SubAgentInput })
 * class ResearchTool extends SubAgentTool {
 *   constructor(runner: AgentRunner) { super(runner) }
 * }
 * ```
 */
export abstract class SubAgentTool {
  constructor(protected readonly runner: AgentRunner) {}

  run(args: object, ctx?: AgentToolContext): Promise<ToolResult> {
    const type = this.constructor as AnyClass;
    return runSubAgent(this.runner, toolOptionsOf(type)?.name ?? defaultToolName(type.name), args, ctx);
  }
}
