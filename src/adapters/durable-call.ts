import { InvalidArgumentError, ToolnexusError } from '../errors';
import { messageOf } from '../errors/message';
import { pendingOf } from '../results/helpers';
import type { PendingRequest, ToolResult } from '../results/wire';
import type { Principal } from '../suspension/audit';
import { ResumeCoordinator } from '../suspension/coordinator';
import { Redactor } from '../suspension/redact';
import type { SuspendedCall } from '../suspension/store';
import { APPROVAL_FOR } from '../toolkit/approval';
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

  constructor(
    readonly coordinator: ResumeCoordinator,
    readonly tool: RegisteredTool,
    /** Prefix of the durable key: `<framework>:[<conversation>:]`. */
    private readonly prefix: string,
    private readonly approvedBy?: Principal,
    /** On whose behalf calls are made: recorded as `requestedBy`, so they may not approve their own (docs/who-may-answer.md). */
    private readonly requestedBy?: Principal,
  ) {}

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
    if (recorded !== undefined) return { args: recorded.args, request: recorded.request };
    const call = await this.coordinator.toolkit.prepare(this.tool.name, input);
    if (!call.ok) return undefined;
    const ctx = hostState(state);
    if (policy.when && !(await policy.when(call.args, ctx))) return undefined;
    // The declared approval asks before run: this records the request and runs nothing.
    const result = await this.coordinator.run(call, ctx, { callId, runId: key, ...this.requester() });
    const request = pendingOf(result);
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
      if (call) return this.approve(call, ctx);
    }
    const prepared = typeof input === 'object' && input !== null ? this.validated.get(input) : undefined;
    if (prepared) return this.coordinator.run(prepared, ctx, { callId, runId: key, ...this.requester() });
    return this.coordinator.execute(this.tool.name, input, ctx, { callId, runId: key, ...this.requester() });
  }

  /** Settles the call's recorded approval as declined (the framework's user refused it); false when there is none pending. */
  async decline(callId: string, reason: string | undefined): Promise<boolean> {
    const call = await this.approvalOf(this.prefix + callId);
    if (!call || call.status !== 'pending') return false;
    const answer = { id: call.request.id, ok: false, reason: 'declined' as const, ...(reason ? { data: { reason } } : {}) };
    await this.coordinator.resolve(answer, undefined, this.approvedBy ? { by: this.approvedBy } : undefined);
    return true;
  }

  private async approve(call: SuspendedCall, ctx: ToolContext): Promise<ToolResult> {
    try {
      return await this.coordinator.resolve({ id: call.request.id, ok: true }, ctx, this.approvedBy ? { by: this.approvedBy } : undefined);
    } catch (error) {
      // Declined in the inbox, say, before the framework's approval arrived: the model is told.
      return { output: `${this.tool.name}: ${messageOf(error)}`, isError: true };
    }
  }

  private requester(): { principal?: Principal } {
    return this.requestedBy ? { principal: this.requestedBy } : {};
  }

  /** This tool's recorded approval request for the key, if any. */
  private async approvalOf(key: string): Promise<SuspendedCall | undefined> {
    const calls = await this.coordinator.store.list({ runId: key, kind: 'approval' });
    return calls.find((c) => c.tool === this.tool.name && c.request.data?.[APPROVAL_FOR] === this.tool.name);
  }
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
