import { InvalidAnswerError } from '../errors';
import type { Answer } from '../results/wire';
import type { AgentRunner } from '../runner/agent-runner';
import type { Principal } from '../suspension/audit';
import { editedAnswer } from '../suspension/signing';
import { isSettled } from '../suspension/status';
import type { SuspendedCall } from '../suspension/store';
import type { StoredSession } from '../sessions/store';
import { ChatRequestError } from './errors';
import type { ChatRequestData } from './parts';
import { StreamRedactor } from './redact';
import type { ToolPartIn } from './request';

/**
 * One answer per approval and per tool call: two (approved and declined) would have the first
 * run the tool and the second fail after it, so such a request is refused before anything runs.
 */
export function refuseDuplicates(parts: readonly ToolPartIn[]): void {
  const approvals = new Set<string>();
  const calls = new Set<string>();
  for (const part of parts) {
    const approvalId = part.approval?.id;
    if (approvalId !== undefined && approvals.has(approvalId))
      throw new ChatRequestError(400, 'duplicate_approval', `approval request ${approvalId} is answered twice in one message`);
    if (calls.has(part.toolCallId))
      throw new ChatRequestError(400, 'duplicate_approval', `tool call ${part.toolCallId} is answered twice in one message`);
    if (approvalId !== undefined) approvals.add(approvalId);
    calls.add(part.toolCallId);
  }
}

/**
 * The 409 for a message to a chat whose run is halted, saying what is true and what to do:
 * either it waits for answers (listed in the body's `open`, redacted, as their parts show them:
 * a page shows them, a `recovery` request is an operator's to answer), and the message was not
 * taken: the page keeps it and sends it again once they are answered; or all are in but the run
 * could not be continued (the attempt before failed), and the next message tries again.
 */
export async function haltedChat(runner: AgentRunner, runId: string, session: StoredSession | undefined): Promise<ChatRequestError> {
  const open = await runner.coordinator.store.list({ runId, status: 'pending' });
  if (open.length === 0)
    return new ChatRequestError(
      409,
      'busy',
      'this chat has every answer it asked for, but its run could not be continued yet: send again to retry',
    );
  const redactor = new StreamRedactor(runner.toolkit);
  for (const message of session?.messages ?? [])
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) redactor.call(call.name, call.arguments);
  const requests: ChatRequestData[] = [];
  for (const call of open) {
    const data: ChatRequestData = {
      id: call.request.id,
      toolCallId: call.callId ?? '',
      kind: call.request.kind,
      prompt: call.request.prompt,
    };
    if (call.request.url !== undefined) data.url = call.request.url;
    if (call.request.expiresAt !== undefined) data.expiresAt = call.request.expiresAt;
    requests.push(redactor.value(data));
  }
  const kinds = [...new Set(requests.map((request) => request.kind))].join(', ');
  return new ChatRequestError(
    409,
    'busy',
    `this chat is waiting for an answer: answer its open request${open.length > 1 ? 's' : ''} first (${kinds}; listed in open). ` +
      'Your message was not taken: send it again once answered',
    { open: requests },
  );
}

/**
 * Every edit of the body names an approval this message approves: an edit of nothing, or of a
 * declined call, is refused rather than dropped.
 */
export function refuseStrayEdits(parts: readonly ToolPartIn[], edits: ReadonlyMap<string, unknown> | undefined): void {
  for (const id of edits?.keys() ?? []) {
    const part = parts.find((p) => p.approval?.id === id);
    if (!part) throw new ChatRequestError(400, 'bad_body', `edits name approval ${id}, which this message does not answer`);
    if (part.approval?.approved !== true)
      throw new ChatRequestError(400, 'bad_body', `approval ${id} is declined: only an approval is edited`);
  }
}

/**
 * One approval response checked against its stored request, the chat's run and the answer
 * policy, before any is applied; `args` are its edited arguments, checked as the coordinator
 * checks them (shape and size, the request allows an edit, the tool's DTO). Returns the answer
 * to give. A refusal by the policy is returned, not thrown: the chat explains it in the stream.
 */
export async function checkApproval(
  runner: AgentRunner,
  part: ToolPartIn,
  session: StoredSession | undefined,
  principal: Principal,
  args?: Record<string, unknown>,
): Promise<CheckedApproval> {
  const runId = session?.active?.phase === 'halted' ? session.active.runId : undefined;
  const approval = part.approval;
  if (!approval || typeof approval.approved !== 'boolean')
    throw new ChatRequestError(400, 'bad_body', `tool call ${part.toolCallId} is approval-responded without approved: true | false`);
  const call = await runner.coordinator.get(approval.id);
  if (!call) throw new ChatRequestError(404, 'unknown_approval', `no approval request ${approval.id}`);
  if (call.request.kind !== 'approval')
    throw new ChatRequestError(400, 'wrong_kind', `request ${approval.id} is a ${call.request.kind} request, not an approval`);
  if (call.callId !== part.toolCallId || call.tool !== part.toolName)
    throw new ChatRequestError(400, 'wrong_call', `request ${approval.id} does not belong to tool call ${part.toolCallId}`);
  // A call being resolved is not refused here: its holder may have died, and the claim decides.
  const id = call.request.id;
  let answer: Answer = approval.approved ? { id, ok: true, ...(args ? { args } : {}) } : { id, ok: false, reason: 'declined' };
  if (isSettled(call.status)) return { part, call, answer, settled: settledResult(call, session) };
  if (runId === undefined || call.runId !== runId)
    throw new ChatRequestError(403, 'not_yours', `request ${approval.id} is not one this chat is waiting for`);
  if (args) {
    try {
      // The coordinator's own checks, so a bad edit is refused before any answer of the message is applied.
      answer = await editedAnswer(runner.coordinator.toolkit, call, runner.coordinator.checkAnswer(answer));
    } catch (error) {
      if (error instanceof InvalidAnswerError) throw new ChatRequestError(400, 'invalid_edit', error.message);
      throw error;
    }
  }
  // The coordinator's answer policy, asked before any answer is applied; the claim judges again.
  const decision = await runner.coordinator.decide(principal, call, answer);
  return { part, call, answer, ...(decision === 'allow' ? {} : { refused: decision.deny }) };
}

/** An approval response as {@link checkApproval} found it. */
export interface CheckedApproval {
  part: ToolPartIn;
  call: SuspendedCall;
  /** The answer to give (an approval's edited arguments as the tool's DTO parsed them). */
  answer: Answer;
  /** The answer policy's reason, when it refuses the principal's answer. */
  refused?: string;
  /** The call was settled already (a retry, another tab, the inbox, a recovery): how it ended, as this chat keeps it. Nothing is applied. */
  settled?: { output: string; isError: boolean };
}

/**
 * How a settled call ended, for the chat that asks: its result in the session's thread, else
 * its outcome when it is a call of the session's own run. Another chat's call is `not_pending`
 * as before, so its outcome is never shown to a page that did not make it.
 */
function settledResult(call: SuspendedCall, session: StoredSession | undefined): { output: string; isError: boolean } {
  for (const message of session?.messages ?? [])
    if (message.role === 'tool' && message.callId === call.callId) return { output: message.content, isError: message.isError };
  if (call.outcome && call.runId !== undefined && call.runId === session?.active?.runId)
    return { output: call.outcome.output, isError: call.outcome.isError };
  throw new ChatRequestError(409, 'not_pending', `request ${call.request.id} is already ${call.status}`);
}
