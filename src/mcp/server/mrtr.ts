import { randomBytes } from 'node:crypto';
import { checkKeyLease, checkRetention, executeOnce } from '../../suspension/keyed';
import { AnswerRefusedError } from '../../errors';
import { messageOf } from '../../errors/message';
import { failure, pendingOf } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import { answerAs, type Answered } from '../../runner/answer-as';
import type { Principal } from '../../suspension/audit';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import { approvalsOf, quorumOf } from '../../suspension/quorum';
import { Redactor } from '../../suspension/redact';
import type { SuspendedCall } from '../../suspension/store';
import type { ElicitationReply } from '../elicitation';
import { answerOf, answerProblem, elicitationFor, type Elicitation, type ElicitationSupport } from './elicitation';
import { McpInputResponseError, McpRequestStateError } from './errors';
import { RequestStateSealer, requestDigest } from './request-state';
import { inputRoundOf, type McpInputRequest, type McpInputRound } from './input-round';
import type { McpTaskSupport } from './tasks';
import { outOfBandResult, toMcpResult, type McpCallResult } from './results';
import type { McpServerOptions, McpToolContext } from './types';
import { atLeastZero, positive } from './bounds';

/** What the 2026-07-28 `tools/call` answers: a tool result, or the MRTR round trip of a suspension. */
export type ModernCallResult = McpCallResult | InputRequired;

/** An MRTR `InputRequiredResult` (basic/patterns/mrtr.mdx). */
export interface InputRequired {
  resultType: 'input_required';
  inputRequests?: Record<string, McpInputRequest>;
  requestState?: string;
  /** The suspension this round trip waits on (serveMcp's own: stripped before it is sent; a task is made of it). */
  suspension?: string;
}

/** How serveMcp turns suspensions into MRTR round trips, shared by every request of one server. */
export interface MrtrSettings {
  sealer: RequestStateSealer;
  /** How long a state is good for, in ms (never past the call's own `expiresAt`). */
  ttlMs: number;
  clock: { now(): number };
  /** The page where someone other than the caller answers a call (the inbox), for a URL-mode elicitation. */
  inboxUrl?: (suspensionId: string) => string;
  /** Whether a tool's call may become a task (the tasks extension). */
  taskSupport: (tool: string) => McpTaskSupport;
  /** A call of a client that takes tasks still running after this many ms becomes a task. */
  taskAfterMs: number;
  /** `McpServerOptions.idempotencyRetentionMs`. */
  idempotencyRetentionMs?: number;
  /** `McpServerOptions.idempotencyLeaseMs`. */
  idempotencyLeaseMs?: number;
}

/**
 * The MRTR settings of one server, from its options (checked): over HTTP one endpoint's, over
 * stdio one connection's. Without `requestStateKeys`, a random key of this process seals.
 */
export function mrtrSettingsOf(options: McpServerOptions, clock: { now(): number } = Date): MrtrSettings {
  // Checked here once for both eras: every transport builds these settings before it serves (the 2025-11-25 sessions use the same options).
  checkRetention('McpServerOptions.idempotencyRetentionMs', options.idempotencyRetentionMs);
  checkKeyLease('McpServerOptions.idempotencyLeaseMs', options.idempotencyLeaseMs);
  return {
    sealer: new RequestStateSealer(options.requestStateKeys ?? [randomBytes(32)]),
    ttlMs: positive('requestStateTtlMs', options.requestStateTtlMs, 3_600_000),
    clock,
    ...(options.inboxUrl ? { inboxUrl: options.inboxUrl } : {}),
    taskSupport: (tool) => (typeof options.tasks === 'string' ? options.tasks : (options.tasks?.[tool] ?? 'allowed')),
    taskAfterMs: atLeastZero('taskAfterMs', options.taskAfterMs, 1000),
    ...(options.idempotencyRetentionMs !== undefined ? { idempotencyRetentionMs: options.idempotencyRetentionMs } : {}),
    ...(options.idempotencyLeaseMs !== undefined ? { idempotencyLeaseMs: options.idempotencyLeaseMs } : {}),
  };
}

/** One `tools/call` of a 2026-07-28 client, with what the request carried. */
export interface ModernCall {
  name: string;
  args: Record<string, unknown>;
  /** The authenticated principal (serveMcp's `authorize`), else the one MCP client. */
  by: Principal;
  /** The raw `requestState` echoed, when the request carried one. */
  requestState?: unknown;
  inputResponses?: Record<string, unknown>;
  support: ElicitationSupport;
  ctx: McpToolContext;
  /** The idempotency key of the request's `_meta` (docs/mcp.md, "Idempotency keys"), when it carried one. */
  key?: string;
}

/** The suffix of the key under which the caller is sent where someone else answers (the inbox): never an answer. */
const WAIT_SUFFIX = 'waiting';

/**
 * The `inputRequests` key of what `stored` asks now (SEP-2663, "each request key MUST be unique
 * over the lifetime of a single task"): the suspension's id, then a new key with each signature
 * recorded, since the request it names (its progress) changed. A chain's next link has its own id.
 */
export function requestKey(stored: SuspendedCall): string {
  const signed = stored.signatures?.length ?? 0;
  return signed === 0 ? stored.request.id : `${stored.request.id}.${signed}`;
}

/** What a waiting call waits for: `approval 1 of 2 (finance:ann, finance:ben)` for a quorum, its kind otherwise. */
export function progressOf(stored: SuspendedCall): string {
  const quorum = quorumOf(stored.request);
  if (!quorum) return stored.request.kind;
  const who = quorum.from ? ` (${quorum.from.join(', ')})` : '';
  return `${stored.request.kind} ${approvalsOf(stored.signatures).length} of ${quorum.of}${who}`;
}

/**
 * Serves one 2026-07-28 `tools/call` (docs/mcp.md, "A suspended call over MCP"). Without a
 * `requestState` the tool runs through the coordinator; a suspension (recorded durably before
 * this returns) becomes `input_required` with a sealed state naming it. A retry's state is
 * opened (signature, TTL, principal, request digest) before anything is looked up; its
 * answer goes the path every front end's answers go (`answerAs`: the answer policy with the
 * retry's principal, the claim, one replay). A call already settled answers its stored outcome.
 *
 * @throws {@link McpRequestStateError} a refused state (nothing was looked up or changed).
 */
export async function serveModernCall(
  coordinator: ResumeCoordinator,
  call: ModernCall,
  settings: MrtrSettings,
  outputSchema: unknown,
): Promise<ModernCallResult> {
  const digest = requestDigest('tools/call', call.name, call.args);
  const state =
    call.requestState === undefined
      ? undefined
      : settings.sealer.open(call.requestState, { now: settings.clock.now(), principal: call.by.id, digest });
  if (state?.sid === undefined) {
    // A first call, or the next round of the tool's own input round: the tool runs (again) with what came back.
    if (state?.data !== undefined) call.ctx.mcp.requestState = state.data;
    // A first call keyed by the client runs once per key (a repeat gets the first outcome); an input round's retry runs again.
    const key = state === undefined && call.inputResponses === undefined ? call.key : undefined;
    const result = await executeOnce(coordinator, 'mcp', call.name, call.args, call.ctx, {
      principal: call.by,
      key,
      ...(settings.idempotencyRetentionMs !== undefined ? { retentionMs: settings.idempotencyRetentionMs } : {}),
      ...(settings.idempotencyLeaseMs !== undefined ? { leaseMs: settings.idempotencyLeaseMs } : {}),
    });
    return finish(coordinator, call, settings, digest, result, outputSchema);
  }
  const stored = await coordinator.get(state.sid);
  // A state this server sealed names a call its store recorded; one the store no longer has was swept.
  if (!stored) throw new McpRequestStateError('expired');
  if (stored.status !== 'pending' && stored.status !== 'resolving')
    return settled(coordinator, call, settings, digest, stored, outputSchema);
  const response = call.inputResponses?.[requestKey(stored)];
  if (response === undefined) {
    // Nothing answered (or only the page was opened): still waiting, or settled by someone else meanwhile.
    return waiting(coordinator, call, settings, digest, stored);
  }
  try {
    const answered = await answerRetry(coordinator, call, stored);
    // A quorum's signature before the last one needed: recorded, the call still waits for the others.
    if (answered.call.status === 'pending') return waiting(coordinator, call, settings, digest, answered.call);
    const outcome = answered.outcome ?? (await coordinator.get(state.sid))?.outcome;
    return finish(
      coordinator,
      call,
      settings,
      digest,
      outcome ?? failure(`suspension ${state.sid} is ${answered.call.status}`),
      outputSchema,
    );
  } catch (error) {
    // The policy's refusal changed nothing: said to the caller as a tool error, the call still waits for who may answer.
    if (error instanceof AnswerRefusedError) return { content: [{ type: 'text', text: error.message }], isError: true };
    throw error;
  }
}

/**
 * A retry's (or `tasks/update`'s) answer to `stored`, from `call.inputResponses`: checked against
 * what was asked, then given through `answerAs` as `call.by` (the policy, the claim, one replay).
 *
 * @throws {@link McpInputResponseError} the response is not an answer that fits.
 * @throws {@link AnswerRefusedError} the policy refused it; nothing changed.
 */
export async function answerRetry(coordinator: ResumeCoordinator, call: ModernCall, stored: SuspendedCall): Promise<Answered> {
  const key = requestKey(stored);
  const response = call.inputResponses?.[key];
  const reply = response === undefined ? undefined : replyOf(response);
  if (!reply) throw new McpInputResponseError(`inputResponses.${key} is not an elicitation result`);
  const shown = new Redactor(coordinator.toolkit).request(call.name, call.args, stored.request);
  const plan = elicitationFor({ ...stored.request, prompt: shown.prompt }, { form: true, url: true });
  if ('elicit' in plan) {
    const problem = answerProblem(plan.elicit, reply);
    if (problem) throw new McpInputResponseError(`the answer does not fit the form: ${problem}`);
  }
  return answerAs(coordinator, answerOf(stored.request, reply), { by: call.by, context: call.ctx, signal: call.ctx.signal });
}

/** What a waiting call asks this caller (a form, a login, or where others answer it): the task's `inputRequests`. */
export async function waitingRequests(
  coordinator: ResumeCoordinator,
  call: ModernCall,
  settings: MrtrSettings,
  stored: SuspendedCall,
): Promise<ModernCallResult> {
  return waiting(coordinator, call, settings, requestDigest('tools/call', call.name, call.args), stored);
}

async function settled(
  coordinator: ResumeCoordinator,
  call: ModernCall,
  settings: MrtrSettings,
  digest: string,
  stored: SuspendedCall,
  outputSchema: unknown,
): Promise<ModernCallResult> {
  const outcome = stored.outcome ?? failure(`suspension ${stored.request.id} is ${stored.status}`);
  return finish(coordinator, call, settings, digest, outcome, outputSchema);
}

/** A result as the client gets it: a next link of the chain is another round trip, anything else the tool's result. */
async function finish(
  coordinator: ResumeCoordinator,
  call: ModernCall,
  settings: MrtrSettings,
  digest: string,
  result: ToolResult,
  outputSchema: unknown,
): Promise<ModernCallResult> {
  const round = inputRoundOf(result);
  if (round) return inputRequired(round, call.by, digest, settings);
  const pending = pendingOf(result);
  if (!pending) return toMcpResult(result, outputSchema);
  const stored = await coordinator.get(pending.id);
  if (!stored) return toMcpResult(result, outputSchema);
  return waiting(coordinator, call, settings, digest, stored);
}

/**
 * An input round as the client gets it (a tool's, or a prompt's): its requests, and its state
 * sealed for this principal and this request (`digest`), good for the settings' TTL.
 */
export function inputRequired(round: McpInputRound, by: Principal, digest: string, settings: MrtrSettings): InputRequired {
  const out: InputRequired = { resultType: 'input_required' };
  if (round.inputRequests) out.inputRequests = round.inputRequests;
  if (round.requestState !== undefined)
    out.requestState = settings.sealer.seal({
      data: round.requestState,
      sub: by.id,
      dig: digest,
      exp: settings.clock.now() + settings.ttlMs,
    });
  return out;
}

/**
 * The `input_required` for a call still waiting: a form (or, for a login, a URL) when the caller
 * may answer it, else a URL to the page where those who may answer it do (the inbox).
 */
async function waiting(
  coordinator: ResumeCoordinator,
  call: ModernCall,
  settings: MrtrSettings,
  digest: string,
  stored: SuspendedCall,
): Promise<ModernCallResult> {
  const pending = stored.request;
  const shown = new Redactor(coordinator.toolkit).request(call.name, call.args, pending);
  const expiresAt = pending.expiresAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(pending.expiresAt);
  const exp = Math.min(settings.clock.now() + settings.ttlMs, Number.isFinite(expiresAt) ? expiresAt : Number.POSITIVE_INFINITY);
  const requestState = settings.sealer.seal({ sid: pending.id, sub: call.by.id, dig: digest, exp });
  const mayAnswer = await mayAnswerIt(coordinator, call.by, stored);
  if (mayAnswer) {
    const plan = elicitationFor({ ...pending, prompt: shown.prompt }, call.support);
    if ('outOfBand' in plan) return outOfBandResult(shown, plan.outOfBand);
    return {
      resultType: 'input_required',
      inputRequests: { [requestKey(stored)]: embedded(plan.elicit) },
      requestState,
      suspension: pending.id,
    };
  }
  const url = settings.inboxUrl?.(pending.id);
  if (url === undefined || !call.support.url) return { resultType: 'input_required', requestState, suspension: pending.id };
  const progress = quorumOf(pending) ? ` (${progressOf(stored)})` : '';
  const message = `Waiting for someone who may answer: ${shown.prompt}${progress}`;
  return {
    resultType: 'input_required',
    inputRequests: { [`${requestKey(stored)}.${WAIT_SUFFIX}`]: { method: 'elicitation/create', params: { mode: 'url', message, url } } },
    requestState,
    suspension: pending.id,
  };
}

async function mayAnswerIt(coordinator: ResumeCoordinator, by: Principal, stored: SuspendedCall): Promise<boolean> {
  // Asked even without a policy: a quorum's `from` names its signers whatever the policy says.
  try {
    return (await coordinator.decide(by, stored, { id: stored.request.id, ok: true })) === 'allow';
  } catch (error) {
    throw new Error(`the answer policy failed: ${messageOf(error)}`);
  }
}

/** An elicitation as an MRTR embedded request: 2026-07-28 has no `elicitationId` (URL completion notifications were removed). */
function embedded(elicit: Elicitation): { method: 'elicitation/create'; params: Record<string, unknown> } {
  if (elicit.mode === 'url') return { method: 'elicitation/create', params: { mode: 'url', message: elicit.message, url: elicit.url } };
  return { method: 'elicitation/create', params: { ...elicit } };
}

function replyOf(response: unknown): ElicitationReply | undefined {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return undefined;
  const { action, content } = response as { action?: unknown; content?: unknown };
  if (action !== 'accept' && action !== 'decline' && action !== 'cancel') return undefined;
  if (content === undefined) return { action };
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return undefined;
  return { action, content: content as Record<string, unknown> };
}
