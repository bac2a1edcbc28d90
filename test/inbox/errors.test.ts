import { InboxError, InboxForbiddenError } from 'toolnexus-ts/inbox';
import * as inbox from 'toolnexus-ts/inbox';

/** The inbox's released codes and statuses: programs match on them, so this list only grows. */
const RELEASED: Record<string, [code: string, status: number]> = {
  InboxError: ['TOOLNEXUS_INBOX', 400],
  InboxBadRequestError: ['TOOLNEXUS_INBOX_BAD_REQUEST', 400],
  InboxInvalidInputError: ['TOOLNEXUS_INBOX_BAD_REQUEST', 400],
  InboxBodyTooLargeError: ['TOOLNEXUS_INBOX_BODY_TOO_LARGE', 413],
  InboxUnauthorizedError: ['TOOLNEXUS_INBOX_UNAUTHORIZED', 401],
  InboxForbiddenError: ['TOOLNEXUS_INBOX_FORBIDDEN', 403],
  InboxNotFoundError: ['TOOLNEXUS_INBOX_NOT_FOUND', 404],
  InboxCsrfError: ['TOOLNEXUS_INBOX_CSRF', 403],
  InboxTicketError: ['TOOLNEXUS_INBOX_TICKET', 400],
  SuspensionExpiredError: ['TOOLNEXUS_SUSPENSION_EXPIRED', 410],
  AnsweredByOtherError: ['TOOLNEXUS_ANSWERED_BY_OTHER', 409],
};

describe('inbox error codes', () => {
  it('every exported inbox error has its released code and HTTP status', () => {
    const classes = Object.entries(inbox as Record<string, unknown>).filter(
      ([, value]) =>
        typeof value === 'function' && (value === InboxError || (value as { prototype: unknown }).prototype instanceof InboxError),
    );
    expect(classes.map(([name]) => name).sort()).toEqual(Object.keys(RELEASED).sort());
    for (const [name, cls] of classes) {
      const error = new (cls as new (...args: unknown[]) => InboxError)('x', []);
      expect([name, error.code, error.status, error.name]).toEqual([name, ...(RELEASED[name] as [string, number]), name]);
    }
  });

  it('a refusal says why and carries no secret', () => {
    expect(new InboxForbiddenError('alice may not answer approval requests of transfer').message).toBe(
      'alice may not answer approval requests of transfer',
    );
    expect(new inbox.AnsweredByOtherError('pnd-1', 'resolved', { id: 'bob', name: 'Bob' }).message).toBe(
      'suspension pnd-1 was already answered by Bob (it is resolved)',
    );
  });
});
