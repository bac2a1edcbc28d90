import { ToolnexusError } from '../errors';
import type { Principal } from '../suspension/audit';
import type { FieldProblem } from './input-schema';

/**
 * Base of the errors the inbox answers an HTTP request with (docs/operating.md, "Inbox").
 * `status` is the HTTP status it is sent with; the body is `{ error: { code, message } }`.
 */
export class InboxError extends ToolnexusError {
  override readonly code: string = 'TOOLNEXUS_INBOX';
  /** The HTTP status the inbox answers with. */
  readonly status: number = 400;
}

/** The request is not JSON, not the shape the route takes, or names an unknown filter value. */
export class InboxBadRequestError extends InboxError {
  override readonly code = 'TOOLNEXUS_INBOX_BAD_REQUEST';
  override readonly status = 400;
}

/** An answer's data does not fit the form of its `input`/`question` request; `problems` says where. */
export class InboxInvalidInputError extends InboxBadRequestError {
  constructor(
    id: string,
    readonly problems: FieldProblem[],
  ) {
    super(`the answer to ${id} does not fit its form: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`);
  }
}

/** The request body is larger than `maxBodyBytes`; reading stopped there. */
export class InboxBodyTooLargeError extends InboxError {
  override readonly code = 'TOOLNEXUS_INBOX_BODY_TOO_LARGE';
  override readonly status = 413;
  constructor(readonly limitBytes: number) {
    super(`the request body is larger than ${limitBytes} bytes`);
  }
}

/** No principal: `authorize` refused the request (no credentials, or wrong ones). */
export class InboxUnauthorizedError extends InboxError {
  override readonly code = 'TOOLNEXUS_INBOX_UNAUTHORIZED';
  override readonly status = 401;
  constructor(message = 'sign in to use this inbox') {
    super(message);
  }
}

/** The principal may not do this (a per-principal rule), or a non-loopback request reached a local-only inbox. */
export class InboxForbiddenError extends InboxError {
  override readonly code = 'TOOLNEXUS_INBOX_FORBIDDEN';
  override readonly status = 403;
}

/** The route or the thing it names does not exist (an unknown grant, say). */
export class InboxNotFoundError extends InboxError {
  override readonly code = 'TOOLNEXUS_INBOX_NOT_FOUND';
  override readonly status = 404;
}

/** A state-changing request without the page's CSRF token, or from another origin. */
export class InboxCsrfError extends InboxError {
  override readonly code = 'TOOLNEXUS_INBOX_CSRF';
  override readonly status = 403;
  constructor(detail: string) {
    super(`refused: ${detail} (docs/operating.md, "Authentication and CSRF")`);
  }
}

/** The suspension's answer is past its `expiresAt`, or it already settled as `expired`. */
export class SuspensionExpiredError extends InboxError {
  override readonly code = 'TOOLNEXUS_SUSPENSION_EXPIRED';
  override readonly status = 410;
  constructor(readonly id: string) {
    super(`suspension ${id} has expired`);
  }
}

/**
 * Someone else answered first: the suspension was claimed by another principal (or another
 * path, such as the CLI). `answeredBy` names the winner when the store recorded one.
 */
export class AnsweredByOtherError extends InboxError {
  override readonly code = 'TOOLNEXUS_ANSWERED_BY_OTHER';
  override readonly status = 409;
  constructor(
    readonly id: string,
    readonly suspensionStatus: string,
    readonly answeredBy?: Principal,
  ) {
    super(
      `suspension ${id} was already answered${answeredBy ? ` by ${answeredBy.name ?? answeredBy.id}` : ''} (it is ${suspensionStatus})`,
    );
  }
}

const TICKET_STATUS: Record<string, number> = { invalid: 400, expired: 410, used: 409, 'another-principal': 403, unknown: 404 };

/**
 * An e-mail link (a ticket, docs/channels.md, "E-mail") that does nothing: `invalid` (its
 * signature does not hold: changed, or not from this inbox's secret), `expired` (the link or
 * its request), `used` (its principal already answered, or the call settled),
 * `another-principal` (someone else is signed in), `unknown` (the call is no longer stored);
 * its status 400, 410, 409, 403 and 404 in that order.
 */
export class InboxTicketError extends InboxError {
  override readonly code = 'TOOLNEXUS_INBOX_TICKET';
  override readonly status: number;
  constructor(
    readonly problem: 'invalid' | 'expired' | 'used' | 'another-principal' | 'unknown',
    message: string,
  ) {
    super(message);
    // 400 for a problem this version does not know: a refusal is never mistaken for success.
    this.status = TICKET_STATUS[problem] ?? 400;
  }
}
