import { MAX_COMMENT_LENGTH } from '../suspension/audit';
import type { Ticket } from '../tickets/ticket';
import type { CallBrief } from './brief';
import { CSRF_FIELD } from './csrf';
import { escapeHtml, htmlPage, type Page } from './page';

/** No script at all: a plain form, posted to the page's own URL. */
function policy(nonce: string): string {
  return ["default-src 'none'", `style-src 'nonce-${nonce}'`, "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"].join('; ');
}

function shell(title: string, body: string): Page {
  return htmlPage(title, {
    head: '<meta name="referrer" content="no-referrer">',
    body: () => `<div class="card signin" data-testid="ticket">
${body}
</div>`,
    csp: policy,
  });
}

/**
 * The confirmation page of a ticket's link: the request (redacted), and one button that POSTs
 * the answer the link names, with the page's CSRF token. Opening it answers nothing.
 */
export function ticketPage(title: string, view: CallBrief, ticket: Ticket, csrf: string): Page {
  const approve = ticket.action === 'approve';
  const rows: [string, string][] = [['Call', `${view.tool} ${view.args}`]];
  if (view.requestedBy !== undefined) rows.push(['Asked by', view.requestedBy]);
  if (view.quorum !== undefined) rows.push(['Approvals', view.quorum]);
  if (view.deadline !== undefined) rows.push(['Deadline', view.deadline]);
  return shell(
    title,
    `<h2>${approve ? 'Approve' : 'Decline'} this request?</h2>
<p class="prompt">${escapeHtml(view.prompt)}</p>
<table>${rows.map(([label, value]) => `<tr><th>${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`).join('')}</table>
<form method="post" action="">
  <input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(csrf)}">
  <div class="field"><label for="comment">Comment (optional)</label><textarea id="comment" name="comment" maxlength="${MAX_COMMENT_LENGTH}"></textarea></div>
  <button class="${approve ? 'approve' : 'decline'}" type="submit" data-testid="confirm">${approve ? 'Approve' : 'Decline'} as ${escapeHtml(ticket.principal)}</button>
</form>`,
  );
}

/** What the page says after the answer, or why the link did nothing; `again` offers the same link once more (opened from this site, a sign-in's cookie comes along). */
export function ticketOutcomePage(title: string, heading: string, message: string, options: { again?: boolean } = {}): Page {
  return shell(
    title,
    `<h2>${escapeHtml(heading)}</h2>
<p${options.again ? ' class="error"' : ''} data-testid="ticket-message">${escapeHtml(message)}</p>
${options.again ? '<p><a href="">Open this link again</a> &middot; <a href="../">Sign in to the inbox</a></p>' : ''}`,
  );
}
