import { approvalsOf, quorumOf } from '../suspension/quorum';
import type { SuspendedCall } from '../suspension/store';

/** The longest argument text a page or a card shows. */
export const MAX_ARGS_SHOWN = 600;

/**
 * What a person is shown of a call before answering it, on the inbox's confirmation page and
 * on a channel's approval card (docs/channels.md, "The card"): read from a **redacted** call,
 * so no `@Sensitive` value reaches either.
 */
export interface CallBrief {
  tool: string;
  prompt: string;
  /** The call's arguments as redacted JSON, cut at {@link MAX_ARGS_SHOWN} characters. */
  args: string;
  /** Who the call was made for, when the call says. */
  requestedBy?: string;
  /** A quorum's progress: `1 of 2` (a channel's card adds who may sign). */
  quorum?: string;
  /** RFC 3339: the request's deadline. */
  deadline?: string;
}

/** The brief of `call`, which the caller redacted. */
export function briefOf(call: SuspendedCall): CallBrief {
  const args = JSON.stringify(call.args ?? {});
  const brief: CallBrief = {
    tool: call.tool,
    prompt: call.request.prompt,
    args: args.length > MAX_ARGS_SHOWN ? `${args.slice(0, MAX_ARGS_SHOWN)}…` : args,
  };
  if (call.requestedBy) brief.requestedBy = call.requestedBy.name ?? call.requestedBy.id;
  const quorum = quorumOf(call.request);
  if (quorum) brief.quorum = `${approvalsOf(call.signatures).length} of ${quorum.of}`;
  if (call.request.expiresAt !== undefined) brief.deadline = call.request.expiresAt;
  return brief;
}
