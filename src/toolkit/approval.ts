import { ToolRegistrationError } from '../errors';
import type { ApprovalPolicy } from '../decorators/types';
import { failure, pending } from '../results/helpers';
import type { Answer, AnsweredRequest, PendingRequest, ToolResult } from '../results/wire';
import type { ToolContext } from './context';

/** Marks the approval requests the Toolkit itself asks, so only they can satisfy a declared approval. */
export const APPROVAL_FOR = 'approvalFor';
const MAX_DEFAULT_PROMPT = 500;

/** What the approval step decided: go on to `run` (with this context), or answer with `result`. */
export type ApprovalStep = { run: ToolContext | undefined } | { result: ToolResult };

/** The declared policy as one shape, or `undefined` when calls need no approval. */
export function approvalPolicyOf(option: boolean | ApprovalPolicy | undefined): ApprovalPolicy | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return {};
  const quorum = option.quorum;
  if (quorum !== undefined) {
    if (!Number.isSafeInteger(quorum.of) || quorum.of < 2)
      throw new ToolRegistrationError('approval.quorum.of must be a whole number of 2 or more');
    if (quorum.declines !== undefined && !(Number.isSafeInteger(quorum.declines) && quorum.declines >= 1))
      throw new ToolRegistrationError('approval.quorum.declines must be a whole number of 1 or more');
  }
  return option;
}

/**
 * Asks for the approval a tool declares, or finds it among the answers of this call's chain.
 * Only an ok answer to a request the Toolkit asked for this tool counts: a login answered
 * on the same call carries another kind and another marker.
 */
export async function approvalStep(
  tool: string,
  policy: ApprovalPolicy,
  args: object,
  ctx: ToolContext | undefined,
): Promise<ApprovalStep> {
  if (policy.when && !(await policy.when(args, ctx))) return { run: ctx };
  const answered = approvalAnswered(tool, ctx);
  if (answered?.ok) return { run: { ...ctx, approval: answered } };
  if (answered) return { result: failure(`declined/expired: ${promptOf(tool, policy, args)}`) };
  const data: Record<string, unknown> = { [APPROVAL_FOR]: tool };
  if (policy.editable === true) data.editable = true;
  if (policy.escalate) data.escalation = { at: new Date(Date.now() + policy.escalate.afterMs).toISOString(), to: [...policy.escalate.to] };
  if (policy.quorum) {
    const { of, from, declines } = policy.quorum;
    data.quorum = { of, ...(from ? { from: [...from] } : {}), ...(declines === undefined ? {} : { declines }) };
  }
  const request: Omit<PendingRequest, 'id'> = { kind: 'approval', prompt: promptOf(tool, policy, args), data };
  if (policy.expiresInMs !== undefined) request.expiresAt = new Date(Date.now() + policy.expiresInMs).toISOString();
  return { result: pending(request) };
}

/** The answer to this tool's own approval request, on this replay or an earlier link; `undefined` if never asked. */
function approvalAnswered(tool: string, ctx: ToolContext | undefined): Answer | undefined {
  const replay = ctx?.replay;
  if (!replay || !ctx.answer) return undefined;
  const links: AnsweredRequest[] = [...replay.chain, { request: replay.request, answer: ctx.answer }];
  for (let i = links.length - 1; i >= 0; i--) {
    const { request, answer } = links[i] as AnsweredRequest;
    if (request.kind === 'approval' && request.data?.[APPROVAL_FOR] === tool && answer.id === request.id) return answer;
  }
  return undefined;
}

function promptOf(tool: string, policy: ApprovalPolicy, args: object): string {
  if (typeof policy.prompt === 'string') return policy.prompt;
  if (typeof policy.prompt === 'function') return policy.prompt(args);
  const shown = JSON.stringify(args) ?? '{}';
  return `Approve ${tool} ${shown.length > MAX_DEFAULT_PROMPT ? `${shown.slice(0, MAX_DEFAULT_PROMPT)}…` : shown}?`;
}
