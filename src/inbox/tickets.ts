import type { ServerResponse } from 'node:http';
import { AlreadyResolvedError, AnswerRefusedError, InvalidArgumentError, UnknownSuspensionError } from '../errors';
import type { Principal } from '../suspension/audit';
import { redactCall } from '../suspension/redact';
import type { SuspendedCall } from '../suspension/store';
import { ticketKey, verifyTicket, type Ticket } from '../tickets/ticket';
import { checkCsrf, CSRF_COOKIE, CSRF_FIELD, csrfTokenFor } from './csrf';
import { InboxError, InboxTicketError, InboxUnauthorizedError } from './errors';
import { cookie, readForm, sendHtml, type InboxRequest } from './http';
import type { Page } from './page';
import type { InboxService } from './service';
import { briefOf, type CallBrief } from './brief';
import { ticketOutcomePage, ticketPage } from './ticket-page';

/**
 * The inbox's side of e-mail approvals (`InboxOptions.tickets`, docs/channels.md, "E-mail"):
 * the secret the channels sign links with, and who may use a link.
 */
export interface InboxTicketOptions {
  /** The secret the channels' `email.secret` signs with: at least 32 bytes. */
  secret: string | Uint8Array;
  /**
   * `'required'` (the default): a link answers only for a request signed in to this inbox as
   * the principal it was sent to; the link alone never does, so a forwarded or leaked link is
   * useless to anyone else. `'link-is-credential'`: a request not signed in is answered as the
   * link's principal (the mailbox is the credential); one signed in as someone else is still
   * refused.
   */
  signIn?: 'required' | 'link-is-credential';
}

/** What the ticket door needs of the inbox. */
export interface TicketDoorParts {
  service: InboxService;
  title: string;
  maxBodyBytes: number;
  now(): number;
  /** The request's principal as the inbox signs it in (`authorize`, a session), or undefined. */
  principalOf(request: InboxRequest): Promise<Principal | undefined>;
}

/**
 * `GET <inbox>/tickets/<token>` shows the request a link answers and never answers it;
 * `POST` to the same URL (the page's form, with its CSRF token) answers it through the
 * coordinator as the link's principal, with the inbox's checks (the answer policy, separation
 * of duties, quorum, expiry). A link whose signature does not hold, that expired, that names
 * someone other than the one signed in, or whose principal already answered (the call
 * settled, or they signed its quorum) gets a page saying so and changes nothing.
 */
export function ticketDoor(options: InboxTicketOptions, parts: TicketDoorParts) {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('tickets needs { secret }');
  const key = ticketKey(options.secret, 'createInbox: tickets');
  const signIn = options.signIn ?? 'required';
  if (signIn !== 'required' && signIn !== 'link-is-credential')
    throw new InvalidArgumentError("tickets.signIn is 'required' or 'link-is-credential'");

  const show = (response: ServerResponse, status: number, page: Page): void => sendHtml(response, status, page.html, page.csp);

  async function who(request: InboxRequest, ticket: Ticket): Promise<Principal> {
    const principal = await parts.principalOf(request);
    if (principal) {
      if (principal.id !== ticket.principal)
        throw new InboxTicketError('another-principal', 'This link was sent to someone else: it does not work for you.');
      return principal;
    }
    if (signIn === 'link-is-credential') return { id: ticket.principal };
    throw new InboxUnauthorizedError(`Sign in to the inbox as ${ticket.principal} to use this link, then open it again.`);
  }

  /** The call when the link's principal may still answer it; else why not. */
  async function open(ticket: Ticket): Promise<SuspendedCall> {
    const call = await parts.service.coordinator.get(ticket.callId);
    if (!call) throw new InboxTicketError('unknown', 'The request this link answers is no longer stored.');
    const past = call.request.expiresAt !== undefined && Date.parse(call.request.expiresAt) <= parts.now();
    if (call.status === 'expired' || (call.status === 'pending' && past))
      throw new InboxTicketError('expired', 'The request expired: it can no longer be answered.');
    if (call.status !== 'pending') throw new InboxTicketError('used', `This request was already answered (it is ${call.status}).`);
    if (call.signatures?.some((signature) => signature.by.id === ticket.principal))
      throw new InboxTicketError('used', 'You already answered this request; it waits for the others.');
    return call;
  }

  return async function handle(request: InboxRequest, response: ServerResponse, token: string, cookiePath: string, secure: boolean) {
    const method = request.method ?? 'GET';
    try {
      if (method !== 'GET' && method !== 'POST') {
        response.setHeader('allow', 'GET, POST');
        return show(response, 405, ticketOutcomePage(parts.title, 'Not allowed', 'Open the link, then confirm on its page.'));
      }
      const verified = verifyTicket(key, token, parts.now());
      if ('problem' in verified) {
        if (verified.problem === 'expired') throw new InboxTicketError('expired', 'This link has expired.');
        throw new InboxTicketError('invalid', 'This link is not valid: it was changed, or it is not from this inbox.');
      }
      const { ticket } = verified;
      const principal = await who(request, ticket);
      const call = await open(ticket);
      if (method === 'GET') {
        const { token: csrf, fresh } = csrfTokenFor(request);
        if (fresh) response.setHeader('set-cookie', cookie(CSRF_COOKIE, csrf, cookiePath, secure));
        return show(response, 200, ticketPage(parts.title, viewOf(parts.service, call), ticket, csrf));
      }
      const form = await readForm(request, parts.maxBodyBytes);
      checkCsrf(request, form.fields.get(CSRF_FIELD));
      const comment = form.fields.get('comment') || undefined;
      const body = { ok: ticket.action === 'approve', ...(comment === undefined ? {} : { comment }) };
      const outcome = await parts.service.answer(request, principal, ticket.callId, body);
      const after = outcome.suspension;
      const said =
        after.status === 'pending'
          ? `Your ${ticket.action === 'approve' ? 'approval' : 'decline'} is recorded; the request waits for the others.`
          : `The request is ${after.status}.`;
      return show(response, 200, ticketOutcomePage(parts.title, ticket.action === 'approve' ? 'Approved' : 'Declined', said));
    } catch (error) {
      const status = statusOf(error);
      if (status === undefined) throw error;
      const message = error instanceof AnswerRefusedError ? `You may not answer this request: ${error.reason}` : (error as Error).message;
      if (error instanceof InboxUnauthorizedError) response.setHeader('www-authenticate', 'Bearer realm="toolnexus-inbox"');
      show(response, status, ticketOutcomePage(parts.title, 'This link did nothing', message, { again: status === 401 }));
    }
  };
}

function statusOf(error: unknown): number | undefined {
  if (error instanceof InboxError) return error.status;
  if (error instanceof AnswerRefusedError) return 403;
  if (error instanceof UnknownSuspensionError) return 404;
  if (error instanceof AlreadyResolvedError) return 409;
  return undefined;
}

/** The page's view of the call, redacted by the one path every door uses. */
function viewOf(service: InboxService, raw: SuspendedCall): CallBrief {
  return briefOf(redactCall(service.coordinator.toolkit, raw));
}
