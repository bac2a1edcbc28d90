import { ToolnexusError } from '../errors';

/**
 * A chat request refused before anything changed (docs/chat.md, "Bad input"). `status` is
 * the HTTP status it is answered with; the body is `{ error: { code, message } }`.
 */
export class ChatRequestError extends ToolnexusError {
  override readonly code: string = 'TOOLNEXUS_CHAT_REQUEST';

  constructor(
    /** The HTTP status (400, 401, 403, 404, 409, 413). */
    readonly status: number,
    /** What is wrong, for programs: `bad_body`, `too_large`, `unauthenticated`, `unknown_tool_call`, `unknown_approval`, `duplicate_approval`, `wrong_kind`, `wrong_call`, `not_yours`, `not_pending`, `busy`, `no_session`, `invalid_edit` (an approval's edited arguments), `answer_refused`. */
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}
