import { ToolRegistrationError } from '../errors';
import { messageOf } from '../errors/message';
import type { ApprovalByArgs, ApprovalPolicy, DeclaredApproval } from '../decorators/types';
import { failure, pending } from '../results/helpers';
import type { AnsweredRequest, PendingRequest, ToolResult } from '../results/wire';
import type { ToolContext } from './context';
import { spreadContext } from '../timing/abort-latch';

/** Marks the approval requests the Toolkit itself asks, so only they can satisfy a declared approval. */
export const APPROVAL_FOR = 'approvalFor';
const MAX_DEFAULT_PROMPT = 500;

/** A tool's declared approval as the Toolkit keeps it: one policy for every call, or a function of the call. */
export type ToolApproval = ApprovalPolicy | ApprovalByArgs;

/** The approval one call needs, as it is asked: its prompt worded. */
export type AskedApproval = DeclaredApproval & { prompt: string };

/** What the approval step decided: go on to `run` (with this context), or answer with `result`. */
export type ApprovalStep = { run: ToolContext | undefined } | { result: ToolResult };

/**
 * The declared approval as the Toolkit keeps it, or `undefined` when calls need no approval.
 * @throws {@link ToolRegistrationError} a malformed approval (a quorum of one, say).
 */
export function approvalPolicyOf(option: boolean | ToolApproval | undefined): ToolApproval | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return {};
  if (typeof option === 'function') return option;
  if (typeof option !== 'object' || option === null)
    throw new ToolRegistrationError('approval must be a boolean, an approval policy or a function of the arguments');
  const problem = approvalProblem(option);
  if (problem) throw new ToolRegistrationError(problem);
  return option;
}

/** What is wrong with a declared approval, checked at registration (a policy) or at each call (a function's result). */
function approvalProblem(approval: Omit<DeclaredApproval, 'prompt'>): string | undefined {
  const { quorum, escalate, expiresInMs } = approval;
  if (quorum !== undefined) {
    if (typeof quorum !== 'object' || quorum === null || !Number.isSafeInteger(quorum.of) || quorum.of < 2)
      return 'approval.quorum.of must be a whole number of 2 or more';
    if (quorum.declines !== undefined && !(Number.isSafeInteger(quorum.declines) && quorum.declines >= 1))
      return 'approval.quorum.declines must be a whole number of 1 or more';
    if (quorum.from !== undefined && !(Array.isArray(quorum.from) && quorum.from.every((id) => typeof id === 'string')))
      return 'approval.quorum.from must be a list of principal ids';
  }
  if (
    escalate !== undefined &&
    !(
      typeof escalate === 'object' &&
      escalate !== null &&
      Number.isFinite(escalate.afterMs) &&
      escalate.afterMs >= 0 &&
      Array.isArray(escalate.to) &&
      escalate.to.every((id) => typeof id === 'string')
    )
  )
    return 'approval.escalate must be { afterMs: a number of milliseconds, to: principal ids }';
  if (expiresInMs !== undefined && !(Number.isFinite(expiresInMs) && expiresInMs > 0))
    return 'approval.expiresInMs must be a positive number of milliseconds';
  return undefined;
}

/**
 * The approval this call needs, with its prompt worded, or `undefined` when it needs none: the
 * policy's (unless its `when` says no), or what the tool's function returns for these arguments.
 * @throws an `Error` saying what is wrong when the function throws or returns something else.
 */
export async function approvalOfCall(
  tool: string,
  declared: ToolApproval,
  args: object,
  ctx: ToolContext | undefined,
): Promise<AskedApproval | undefined> {
  if (typeof declared !== 'function') {
    if (declared.when && !(await declared.when(args, ctx))) return undefined;
    const { prompt, expiresInMs, quorum, editable, escalate } = declared;
    return {
      prompt: typeof prompt === 'function' ? prompt(args) : (prompt ?? defaultPrompt(tool, args)),
      ...(expiresInMs === undefined ? {} : { expiresInMs }),
      ...(quorum === undefined ? {} : { quorum }),
      ...(editable === undefined ? {} : { editable }),
      ...(escalate === undefined ? {} : { escalate }),
    };
  }
  const returned: unknown = await declared(args, ctx);
  if (returned === false) return undefined;
  if (returned === true) return { prompt: defaultPrompt(tool, args) };
  if (typeof returned !== 'object' || returned === null || Array.isArray(returned))
    throw new Error(`it returned ${Array.isArray(returned) ? 'an array' : String(returned)}, not an approval, true or false`);
  const approval = returned as DeclaredApproval;
  const problem = approvalProblem(approval);
  if (problem) throw new Error(problem);
  if (approval.prompt !== undefined && typeof approval.prompt !== 'string') throw new Error('approval.prompt must be a string');
  return { ...approval, prompt: approval.prompt ?? defaultPrompt(tool, args) };
}

/**
 * Asks for the approval a tool declares, or finds it among the answers of this call's chain.
 * Only an ok answer to a request the Toolkit asked for this tool counts: a login answered
 * on the same call carries another kind and another marker. The approval is judged again for
 * the arguments that run (an approver's edit): one that now needs another quorum than the one
 * answered is asked again, so no call runs on less than its arguments need.
 */
export async function approvalStep(
  tool: string,
  declared: ToolApproval,
  args: object,
  ctx: ToolContext | undefined,
): Promise<ApprovalStep> {
  let asked: AskedApproval | undefined;
  try {
    asked = await approvalOfCall(tool, declared, args, ctx);
  } catch (error) {
    // Fail closed: an approval that cannot be worked out never lets the call run.
    return { result: failure(`the approval of ${tool} failed: ${messageOf(error)}`) };
  }
  if (!asked) return { run: ctx };
  const answered = approvalAnswered(tool, ctx);
  if (answered && !answered.answer.ok) return { result: failure(`declined/expired: ${asked.prompt}`) };
  if (answered && quorumKey(answered.request.data?.quorum) === quorumKey(asked.quorum))
    return { run: ctx === undefined ? { approval: answered.answer } : spreadContext(ctx, { approval: answered.answer }) };
  const data: Record<string, unknown> = { [APPROVAL_FOR]: tool };
  // Asked again after an edit: a new question of the same kind, which the chain lets follow (its limit holds).
  if (answered) data.followUp = true;
  if (asked.editable === true) data.editable = true;
  if (asked.escalate) data.escalation = { at: new Date(Date.now() + asked.escalate.afterMs).toISOString(), to: [...asked.escalate.to] };
  if (asked.quorum) {
    const { of, from, declines } = asked.quorum;
    data.quorum = { of, ...(from ? { from: [...from] } : {}), ...(declines === undefined ? {} : { declines }) };
  }
  const request: Omit<PendingRequest, 'id'> = { kind: 'approval', prompt: asked.prompt, data };
  if (asked.expiresInMs !== undefined) request.expiresAt = new Date(Date.now() + asked.expiresInMs).toISOString();
  return { result: pending(request) };
}

/** A quorum as one comparable text (none is one approval); key order and a stored copy do not matter. */
function quorumKey(quorum: unknown): string {
  const { of, from, declines } = (typeof quorum === 'object' && quorum !== null ? quorum : {}) as Partial<
    NonNullable<DeclaredApproval['quorum']>
  >;
  return JSON.stringify([of ?? 1, from ?? null, declines ?? 1]);
}

/** The answer to this tool's own approval request (and that request), on this replay or an earlier link; `undefined` if never asked. */
function approvalAnswered(tool: string, ctx: ToolContext | undefined): AnsweredRequest | undefined {
  const replay = ctx?.replay;
  if (!replay || !ctx.answer) return undefined;
  const links: AnsweredRequest[] = [...replay.chain, { request: replay.request, answer: ctx.answer }];
  for (let i = links.length - 1; i >= 0; i--) {
    const { request, answer } = links[i] as AnsweredRequest;
    if (request.kind === 'approval' && request.data?.[APPROVAL_FOR] === tool && answer.id === request.id) return { request, answer };
  }
  return undefined;
}

function defaultPrompt(tool: string, args: object): string {
  const shown = JSON.stringify(args) ?? '{}';
  return `Approve ${tool} ${shown.length > MAX_DEFAULT_PROMPT ? `${shown.slice(0, MAX_DEFAULT_PROMPT)}…` : shown}?`;
}
