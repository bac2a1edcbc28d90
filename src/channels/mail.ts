import type { CardView } from './view';

/** One link of a mail: what it answers and where it leads. */
export interface MailLink {
  label: 'Approve' | 'Decline';
  url: string;
}

/** A mail as this entry sends it: both a plain-text and an HTML part, saying the same. */
export interface ApprovalMail {
  subject: string;
  text: string;
  html: string;
}

/**
 * The approval mail, from a **redacted** call's card view (docs/channels.md, "E-mail"): the
 * prompt, the call (a `@Sensitive` value reads `[redacted]`), who asked, a quorum's progress
 * when it was sent, the deadline, and one link per answer. A link only opens the inbox's
 * confirmation page; nothing is answered until that page's button is pressed.
 */
export function approvalMail(view: CardView, links: readonly MailLink[], linksExpireAt: string, principal: string): ApprovalMail {
  const rows: [string, string][] = [['Call', `${view.tool} ${view.args}`]];
  if (view.requestedBy !== undefined) rows.push(['Asked by', view.requestedBy]);
  if (view.quorum !== undefined) rows.push(['Approvals', `${view.quorum} when this was sent`]);
  if (view.deadline !== undefined) rows.push(['Deadline', view.deadline]);
  const note =
    `These links are for ${principal} only and work until ${linksExpireAt}. ` +
    'Each opens a page that shows the request; nothing is answered until you confirm there.';
  const text = [
    view.prompt,
    '',
    ...rows.map(([label, value]) => `${label}: ${value}`),
    '',
    ...links.map((link) => `${link.label}: ${link.url}`),
    '',
    note,
    '',
  ].join('\n');
  const html = `<!doctype html><html><body>
<p>${escape(view.prompt)}</p>
<table>${rows.map(([label, value]) => `<tr><th align="left">${escape(label)}</th><td>${escape(value)}</td></tr>`).join('')}</table>
<p>${links.map((link) => `<a href="${escape(link.url)}">${escape(link.label)}</a>`).join(' &middot; ')}</p>
<p><small>${escape(note)}</small></p>
</body></html>`;
  return { subject: oneLine(`Approval needed: ${view.tool}`), text, html };
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A header's text on one line, bounded: no control character reaches a header. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, 200);
}
