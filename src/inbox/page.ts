import { randomBytes } from 'node:crypto';
import type { Principal } from '../suspension/audit';
import { CSRF_FIELD } from './csrf';
import { PAGE_SCRIPT } from './page-script';
import { PAGE_STYLE } from './page-style';

/** A page and the Content-Security-Policy that lets only its own inline script and style run. */
export interface Page {
  html: string;
  csp: string;
}

/** Text made safe inside HTML text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function policy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * An HTML page under a fresh nonce: the head every inbox page shares (charset, viewport, its
 * `head` lines, the title, the style under the nonce) around `body`, with the
 * Content-Security-Policy `csp` gives for that nonce.
 */
export function htmlPage(title: string, parts: { head?: string; body: (nonce: string) => string; csp?: (nonce: string) => string }): Page {
  const nonce = randomBytes(16).toString('base64');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${parts.head === undefined ? '' : `${parts.head}\n`}<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${PAGE_STYLE}</style>
</head>
<body>
${parts.body(nonce)}
</body>
</html>`;
  return { html, csp: (parts.csp ?? policy)(nonce) };
}

/** The inbox page: no build step, no CDN; the data arrives through the JSON API. */
export function inboxPage(title: string, principal: Principal, csrf: string, signOut: boolean): Page {
  return htmlPage(title, {
    head: `<meta name="toolnexus-csrf" content="${escapeHtml(csrf)}">`,
    body: (nonce) => `<header>
  <h1>${escapeHtml(title)}</h1>
  <nav><button data-tab="open" class="active">Open</button><button data-tab="history">History</button><button data-tab="grants">Grants</button></nav>
  <span class="live" id="live">connecting…</span>
  <span class="who">signed in as <strong data-testid="principal">${escapeHtml(principal.name ?? principal.id)}</strong></span>
  ${signOut ? `<form method="post" action="logout"><input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(csrf)}"><button type="submit">Sign out</button></form>` : ''}
</header>
<div class="filters">
  <label>status <select id="status"></select></label>
  <label>kind <select id="kind"><option value="">any</option><option>approval</option><option>input</option><option>question</option><option>authorization</option></select></label>
  <label>run <input id="run" placeholder="run id" size="28"></label>
  <span class="hint"><span id="count">0</span> shown</span>
</div>
<section id="outcome" class="card outcome" data-testid="outcome" role="status" hidden></section>
<main id="list"></main>
<script nonce="${nonce}">${PAGE_SCRIPT}</script>`,
  });
}

/** The sign-in page of a bearer-token inbox: a plain form, posted with the CSRF token. */
export function signInPage(title: string, csrf: string, problem?: string): Page {
  return htmlPage(`Sign in · ${title}`, {
    body: () => `<form class="card signin" method="post" action="login">
  <h2>${escapeHtml(title)}</h2>
  <p>Sign in with your inbox token.</p>
  <input type="hidden" name="${CSRF_FIELD}" value="${escapeHtml(csrf)}">
  <div class="field"><label for="token">Token</label><input id="token" name="token" type="password" autocomplete="current-password" required></div>
  ${problem ? `<p class="error" role="alert">${escapeHtml(problem)}</p>` : ''}
  <button class="approve" type="submit">Sign in</button>
</form>`,
  });
}

/** What a refused page request shows when the host's own `authorize` decides (no sign-in form to offer). */
export function refusedPage(title: string, message: string): Page {
  const nonce = randomBytes(16).toString('base64');
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style nonce="${nonce}">${PAGE_STYLE}</style></head><body><div class="card signin"><h2>${escapeHtml(title)}</h2><p class="error">${escapeHtml(message)}</p></div></body></html>`;
  return { html, csp: policy(nonce) };
}
