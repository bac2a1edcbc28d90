import { AnswerRefusedError, InvalidAnswerError, InvalidArgumentError, ToolnexusError } from '../errors';
import type { ChatRequestData } from './parts';

/** What a refusal says besides its message: the open requests a waiting chat needs answered (docs/chat.md, "After a crash"). */
export interface ChatRefusalDetails {
  /** Each request the chat's run waits for, as its `data-toolnexus-request` part would show it (redacted). */
  open?: ChatRequestData[];
}

/**
 * A chat request refused before anything changed (docs/chat.md, "Bad input"). `status` is
 * the HTTP status it is answered with; the body is `{ error: { code, reason, message } }`, with
 * `open` (the requests to answer first) when the chat waits for answers.
 */
export class ChatRequestError extends ToolnexusError {
  override readonly code: string = 'TOOLNEXUS_CHAT_REQUEST';

  constructor(
    /** The HTTP status (400, 401, 403, 404, 409, 413). */
    readonly status: number,
    /** What is wrong, for programs: `bad_body`, `too_large`, `unauthenticated`, `unknown_tool_call`, `unknown_approval`, `duplicate_approval`, `wrong_kind`, `wrong_call`, `not_yours`, `not_pending`, `busy`, `no_session`, `invalid_edit` (an approval's edited arguments), `answer_refused`. */
    readonly reason: string,
    message: string,
    /** Said in the body beside the message, for the page to show. */
    readonly details: ChatRefusalDetails = {},
  ) {
    super(message);
  }
}

/** The principal a route was given, or the 401 refusal every chat route answers without one. */
export function signedIn<P>(principal: P | undefined): P {
  if (!principal) throw new ChatRequestError(401, 'unauthenticated', 'sign in first');
  return principal;
}

/** The JSON body of a refused chat request: `{ error: { code, reason, message } }`, and what the reason needs said (a waiting chat's `open` requests). */
export function errorBody(error: ChatRequestError): string {
  return JSON.stringify({ error: { code: error.code, reason: error.reason, message: error.message, ...error.details } });
}

/** A refusal, or an unexpected failure told without its message (which may hold what the page must not see). */
export function refusal(error: unknown): ChatRequestError {
  if (error instanceof ChatRequestError) return error;
  if (error instanceof InvalidArgumentError) return new ChatRequestError(400, 'bad_body', error.message);
  if (error instanceof AnswerRefusedError) return new ChatRequestError(403, 'answer_refused', error.message);
  // Only an edit makes an approval's answer invalid: the coordinator's words say what is wrong with it.
  if (error instanceof InvalidAnswerError) return new ChatRequestError(400, 'invalid_edit', error.message);
  const code = error instanceof ToolnexusError ? error.code : 'an internal error';
  return new ChatRequestError(500, 'internal', `the chat request failed: ${code}`);
}
