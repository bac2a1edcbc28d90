/**
 * The approvals inbox: `import { createInbox, bearerToken } from 'toolnexus-ts/inbox'`
 * (docs/operating.md). A separate entry, so services that never mount it load none of it.
 */
export { createInbox } from './handler';
export type { Inbox } from './handler';
export { bearerToken, bearerTokens, BearerTokens, SESSION_COOKIE, LOCAL_PRINCIPAL } from './auth';
export type { Authorize, BearerTokenEntry } from './auth';
export { CSRF_COOKIE, CSRF_HEADER, CSRF_FIELD } from './csrf';
export type { InboxOptions, InboxLogEntry, InboxLogger } from './options';
export type { InboxTicketOptions } from './tickets';
export { MemorySignInStore } from './sign-ins';
export type { InboxSignIn, InboxSignInStore, InboxSignInOptions } from './sign-ins';
export type { SuspensionView, ViewContext } from './view';
export type { DeliveryView } from '../deliveries/view';
export type { InputField, FieldProblem } from './input-schema';
export type { AnswerOutcome, GrantView, InboxQuery, InboxStatusFilter } from './service';
export {
  InboxError,
  InboxBadRequestError,
  InboxInvalidInputError,
  InboxBodyTooLargeError,
  InboxUnauthorizedError,
  InboxForbiddenError,
  InboxNotFoundError,
  InboxCsrfError,
  InboxTicketError,
  SuspensionExpiredError,
  AnsweredByOtherError,
} from './errors';
