import { timingSafeEqual } from 'node:crypto';
import type { OAuthClientInformationContext, OAuthTokens } from '@modelcontextprotocol/client';

// How a provider reads what its store kept: which secrets to redact, whose issuer it was, and a state compared in constant time.

/** A token response's secrets, for the redactor. */
export function tokenSecrets(tokens: OAuthTokens): string[] {
  return [tokens.access_token, tokens.refresh_token].filter((value): value is string => typeof value === 'string');
}

/** Whether a kept value was issued by the authorization server `ctx` names (a value with no issuer recorded, or no `ctx`, is taken). */
export function sameIssuer(stored: Record<string, unknown>, ctx: OAuthClientInformationContext | undefined): boolean {
  return ctx === undefined || typeof stored.issuer !== 'string' || stored.issuer === ctx.issuer;
}

/** Compares two secrets in constant time. */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
