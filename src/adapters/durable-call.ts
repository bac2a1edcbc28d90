import { InvalidArgumentError, ToolnexusError } from '../errors';
import { messageOf } from '../errors/message';
import { pendingOf } from '../results/helpers';
import type { PendingRequest, ToolResult } from '../results/wire';
import type { Principal } from '../suspension/audit';
import { ResumeCoordinator } from '../suspension/coordinator';
import type { Grant } from '../suspension/grants';
import { settledAtOnce } from '../suspension/standing';
import { Redactor } from '../suspension/redact';
import type { ExecuteOptions } from '../suspension/coordinator-options';
import type { SuspendedCall } from '../suspension/store';
import { APPROVAL_FOR, approvalOfCall } from '../toolkit/approval';
import type { ToolContext } from '../toolkit/context';
import type { PreparedCall } from '../toolkit/prepared';
import { Toolkit, type RegisteredTool } from '../toolkit/toolkit';

/**
 * One registered tool as another framework's loop calls it (docs/interop.md). The framework
 * owns the loop and its approval flow; this keeps each call durable and exactly once: a
 * declared approval is recorded in the coordinator's store when the framework asks whether
 * the call needs one, keyed by the framework's call id (the record's `runId`), and the
 * approved execution resolves that record through the coordinator's claim, so a replayed,
 * restored or raced approval runs the tool once and every other gets its stored outcome.
 */
export class DurableCall {
  /** Arguments already validated, by the very object the framework then executes with. */
  private readonly validated = new WeakMap<object, PreparedCall>();
  /** Prefix of the durable key: `<framework>:[<conversation>:]`. */
  private readonly prefix: string;
  /** The conversation's key, `<framework>:<conversation>`, recorded as each call's `session`: what "always approve" grants cover. */
  private readonly session?: string;

  constructor(
    readonly coordinator: ResumeCoordinator,
    readonly tool: RegisteredTool,
    private readonly options: DurableCallOptions,
  ) {
    this.prefix = keyPrefix(options.framework, options.conversationId);
    this.session = sessionOf(options.framework, options.conversationId);
  }
  /** Our validation, as a framework's validator wants it: the problem text, or the value accepted. */
  async validate(value: unknown): Promise<{ ok: true } | { ok: false; problem: string }> {
    const call = await this.coordinator.toolkit.prepare(this.tool.name, value);
    if (!call.ok) return { ok: false, problem: `invalid arguments for ${this.tool.name}: ${call.problem}` };
    if (typeof value === 'object' && value !== null) this.validated.set(value, call);
    return { ok: true };
  }

  /**
   * Whether the call needs the human's approval, recording the request the first time; asked
   * again for the same call (frameworks re-check an approved call before running it), the
   * record already there says yes. Invalid arguments say no: `execute` reports them.
   */
  async needsApproval(callId: string, input: unknown, state: unknown): Promise<boolean> {
    return (await this.askApproval(callId, input, state)) !== undefined;
  }

  /**
   * {@link needsApproval}, answered with the approval request itself (as shown to a person:
   * `@Sensitive()` values redacted in its prompt), or undefined when the call needs none.
   */
  async approvalRequest(callId: string, input: unknown, state: unknown): Promise<PendingRequest | undefined> {
    const asked = await this.askApproval(callId, input, state);
    return asked && new Redactor(this.coordinator.toolkit).request(this.tool.name, asked.args, asked.request);
  }

  /** The approval request of this call and the arguments it was asked for, recorded now or before; undefined when none is needed. */
  private async askApproval(
    callId: string,
    input: unknown,
    state: unknown,
  ): Promise<{ args: unknown; request: PendingRequest } | undefined> {
    const policy = this.tool.approval;
    if (!policy) return undefined;
    const key = this.prefix + callId;
    const recorded = await this.approvalOf(key);
    // Settled by a standing grant (or an automatic answer) when it was recorded: nobody is asked.
    if (recorded !== undefined) return settledAtOnce(recorded) ? undefined : { args: recorded.args, request: recorded.request };
    const call = await this.coordinator.toolkit.prepare(this.tool.name, input);
    if (!call.ok) return undefined;
    const ctx = hostState(state);
    // A policy's `when` or a function of the arguments may say this call needs none; one that fails asks (and fails there).
    if ((await approvalOfCall(this.tool.name, policy, call.args, ctx).catch(() => true)) === undefined) return undefined;
    // The declared approval asks before run: this records the request and runs nothing.
    const result = await this.coordinator.run(call, ctx, this.placeOf(callId));
    const request = pendingOf(result);
    if (request === undefined && (await this.approvalOf(key).then((c) => c !== undefined && settledAtOnce(c)))) return undefined;
    if (request?.kind !== 'approval') throw new ToolnexusError(`${this.tool.name}: expected its approval request, got: ${result.output}`);
    return { args: call.args, request };
  }

  /**
   * Runs the call: an approved one by resolving its recorded approval (one replay, every other
   * caller its outcome), any other through the coordinator, a suspension recorded durably.
   */
  async execute(callId: string, input: unknown, ctx: ToolContext): Promise<ToolResult> {
    const key = this.prefix + callId;
    if (this.tool.approval) {
      const call = await this.approvalOf(key);
      // A grant ran it when the framework asked whether it needs approval: its outcome, once.
      if (call && settledAtOnce(call) && call.outcome) return call.outcome;
      if (call) return this.approve(call, ctx);
    }
    const prepared = typeof input === 'object' && input !== null ? this.validated.get(input) : undefined;
    if (prepared) return this.coordinator.run(prepared, ctx, this.placeOf(callId));
    return this.coordinator.execute(this.tool.name, input, ctx, this.placeOf(callId));
  }

  /**
   * "Always approve" this call's tool for the rest of the conversation (docs/who-may-answer.md,
   * "Grants"): a standing grant by `approvedBy` of scope `session`, its subject the
   * conversation's key, given in answer to this call's pending approval request, so the answer
   * policy judges it as that approval (refused: `AnswerRefusedError`, nothing stored). The call
   * itself is still approved by the framework's own flow. Undefined when the call has no pending
   * approval request here (settled already, or not asked).
   * @throws {@link InvalidArgumentError} no `approvedBy` to give the grant, or no conversation to scope it to.
   */
  async alwaysApprove(callId: string, until?: Date | string): Promise<Grant | undefined> {
    const { approvedBy, framework } = this.options;
    if (!approvedBy) throw new InvalidArgumentError(`${framework}: always approve needs approvedBy, the principal who grants it`);
    if (this.session === undefined)
      throw new InvalidArgumentError(`${framework}: always approve needs a conversationId, the conversation the grant covers`);
    const call = await this.approvalOf(this.prefix + callId);
    if (!call || call.status !== 'pending') return undefined;
    const grant = { by: approvedBy, tool: this.tool.name, scope: 'session' as const, subject: this.session };
    return this.coordinator.grant(until === undefined ? grant : { ...grant, until }, { answering: call.request.id });
  }

  /** Settles the call's recorded approval as declined (the framework's user refused it); false when there is none pending. */
  async decline(callId: string, reason: string | undefined): Promise<boolean> {
    const call = await this.approvalOf(this.prefix + callId);
    if (!call || call.status !== 'pending') return false;
    const answer = { id: call.request.id, ok: false, reason: 'declined' as const, ...(reason ? { data: { reason } } : {}) };
    await this.coordinator.resolve(answer, undefined, this.audit());
    return true;
  }

  private async approve(call: SuspendedCall, ctx: ToolContext): Promise<ToolResult> {
    try {
      return await this.coordinator.resolve({ id: call.request.id, ok: true }, ctx, this.audit());
    } catch (error) {
      // Declined in the inbox, say, before the framework's approval arrived: the model is told.
      return { output: `${this.tool.name}: ${messageOf(error)}`, isError: true };
    }
  }

  private audit(): { by: Principal } | undefined {
    return this.options.approvedBy ? { by: this.options.approvedBy } : undefined;
  }

  /** Where the call sits: its durable key, on whose behalf it is made, and its conversation. */
  private placeOf(callId: string): ExecuteOptions {
    const place: ExecuteOptions = { callId, runId: this.prefix + callId };
    if (this.options.principal) place.principal = this.options.principal;
    if (this.session !== undefined) place.session = this.session;
    return place;
  }

  /** This tool's recorded approval request for the key, if any. */
  private async approvalOf(key: string): Promise<SuspendedCall | undefined> {
    const calls = await this.coordinator.store.list({ runId: key, kind: 'approval' });
    return calls.find((c) => c.tool === this.tool.name && c.request.data?.[APPROVAL_FOR] === this.tool.name);
  }
}

/** Who and where a {@link DurableCall}'s calls are for. */
export interface DurableCallOptions {
  /** Names the framework in keys and messages: `ai-sdk`, `openai-agents`. */
  framework: string;
  /** The conversation the calls belong to: part of their durable key, and their `session`. */
  conversationId?: string;
  /** Who approves a call through the framework's approval flow (the audit trail), and grants its "always approve". */
  approvedBy?: Principal;
  /** On whose behalf calls are made: recorded as `requestedBy`, so they may not approve their own (docs/who-may-answer.md). */
  principal?: Principal;
}

/** The request a pending result carries, as the wire data a framework's output shows. */
export interface PendingOutput {
  status: 'pending';
  id: string;
  kind: string;
  prompt: string;
  url?: string;
}

/** A suspension as another framework's tool output shows it: the request's id (what an Answer names), kind, prompt and URL. */
export function pendingOutput(request: PendingRequest): PendingOutput {
  const out: PendingOutput = { status: 'pending', id: request.id, kind: request.kind, prompt: request.prompt };
  if (request.url !== undefined) out.url = request.url;
  return out;
}

/** The coordinator a framework adapter uses: the one given, or one over a memory store (exactly once within this process only). */
export function coordinatorOf(source: ResumeCoordinator | Toolkit, user: string): ResumeCoordinator {
  if (source instanceof ResumeCoordinator) return source;
  if (source instanceof Toolkit) return new ResumeCoordinator({ toolkit: source });
  throw new InvalidArgumentError(`${user} needs a ResumeCoordinator or a Toolkit`);
}

/** The durable key prefix of a framework's calls, with the conversation when one is named. */
export function keyPrefix(framework: string, conversationId: string | undefined): string {
  return `${framework}:${conversationId === undefined ? '' : `${conversationId}:`}`;
}

/**
 * The conversation's key as a call's `session`, `<framework>:<conversation>`: what a grant of
 * scope `session` names. None without a conversation, whose calls share one unnamed scope.
 */
export function sessionOf(framework: string, conversationId: string | undefined): string | undefined {
  return conversationId === undefined ? undefined : `${framework}:${conversationId}`;
}

/** Each named tool of the coordinator's toolkit (default: all), or an error naming one that is not registered. */
export function toolsOf(coordinator: ResumeCoordinator, names: readonly string[] | undefined, user: string): RegisteredTool[] {
  return (names ?? coordinator.toolkit.tools().map((t) => t.name)).map((name) => {
    const tool = coordinator.toolkit.get(name);
    if (!tool) throw new InvalidArgumentError(`${user}: no tool named ${name} is registered`);
    return tool;
  });
}

/** The host's context as a framework hands it to a tool, when it is an object. */
export function hostState(state: unknown): object {
  return typeof state === 'object' && state !== null ? state : {};
}
