/**
 * What a login's redirect brought back, read apart from the providers that start logins:
 * the source, the call that suspended for a login and the logins all read it.
 */
/** What the browser was sent back with: the code (and `state`), or the authorization server's refusal. */
export type LoginOutcome =
  { code: string; state?: string; bare: boolean; iss?: string } | { error: string; description?: string; state?: string };

/**
 * The code (or the refusal) in what the browser was sent back to: a redirect URL with
 * `?code=` or `?error=` (and `state`, and `iss`), or a bare code (`bare`: there is no state to check).
 */
export function loginOutcome(codeOrRedirect: string): LoginOutcome {
  const text = codeOrRedirect.trim();
  if (!/^https?:\/\//i.test(text)) return { code: text, bare: true };
  const url = new URL(text);
  const state = url.searchParams.get('state') ?? undefined;
  const withState = state !== undefined ? { state } : {};
  const error = url.searchParams.get('error');
  if (error !== null) {
    const description = url.searchParams.get('error_description');
    return { error, ...(description !== null ? { description } : {}), ...withState };
  }
  const code = url.searchParams.get('code');
  if (code === null) return { error: 'invalid_request', description: 'the redirect carries neither code nor error', ...withState };
  // RFC 9207: the issuer the authorization server names in its response, checked against the one discovered.
  const iss = url.searchParams.get('iss');
  return { code, bare: false, ...withState, ...(iss !== null ? { iss } : {}) };
}
