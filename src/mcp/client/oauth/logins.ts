import { OAuthError, UnauthorizedError, type SSEClientTransport, type StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { messageOf } from '../../../errors/message';
import { failure, pending } from '../../../results/helpers';
import type { ToolResult } from '../../../results/wire';
import type { ToolContext } from '../../../toolkit/context';
import type { McpServerSpec } from '../config';
import type { Connection } from '../connection';
import { McpConfigError, McpLoginError, McpLoginRequiredError, isOAuthRefusal } from '../errors';
import { said } from '../failures';
import type { SecretRedactor } from '../redactor';
import { BoundedOAuthFetch, type FetchLike } from './fetch';
import { loginOutcome, type LoginOutcome } from './outcome';
import { LoginOAuthProvider, oauthProvider, type StoredOAuthProvider } from './providers';
import { DEFAULT_OAUTH_RESPONSE_BYTES, type McpOAuthOptions } from './store';

/** A server `connect` found needing a login: what finishing the login connects it with. */
export interface WaitingLogin {
  spec: McpServerSpec;
  redactor: SecretRedactor;
  transport: StreamableHTTPClientTransport | SSEClientTransport;
}

/**
 * The OAuth side of a source: per remote server, the SDK's provider over the host's store and
 * the fetch that bounds what its OAuth servers send; the logins under way; and how a call that
 * needs a login is suspended and, on its replay, finishes it.
 */
export class Logins {
  private readonly providers = new Map<string, StoredOAuthProvider>();
  private readonly fetches = new Map<string, BoundedOAuthFetch>();
  private readonly waiting = new Map<string, WaitingLogin>();

  constructor(private readonly oauth: McpOAuthOptions | undefined) {}

  /** What a transport to `server` needs for OAuth (nothing when the `oauth` option does not cover it). */
  authOf(server: string, spec: McpServerSpec, redactor: SecretRedactor): { authProvider?: StoredOAuthProvider; fetch?: FetchLike } {
    const authProvider = this.providerOf(server, spec, redactor);
    const bounded = this.fetches.get(server);
    // Only this attempt's overflow is reported: one the SDK got past before (an optional document) is not.
    if (bounded) bounded.tripped = undefined;
    return authProvider && bounded ? { authProvider, fetch: bounded.fetch } : {};
  }

  /** Keeps a login `connect` found needed, for `finish` (replacing one kept before). */
  wait(server: string, login: WaitingLogin): void {
    this.waiting.set(server, login);
  }

  /**
   * Checks the redirect's state and exchanges its code for tokens (PKCE). Returns the login
   * `connect` kept, now to be connected, or `undefined` when the server is connected already
   * (a call's login).
   */
  async exchange(server: string, outcome: LoginOutcome, connection: Connection | undefined): Promise<WaitingLogin | undefined> {
    const provider = this.providers.get(server);
    const waiting = this.waiting.get(server);
    const transport = waiting?.transport ?? connection?.transport;
    if (!(provider instanceof LoginOAuthProvider) || !transport) throw new McpLoginError(`server ${server}: no login is under way for it`);
    if (!('code' in outcome && outcome.bare)) await provider.checkState(outcome.state);
    if ('error' in outcome) {
      await provider.invalidateCredentials('verifier');
      const refused =
        outcome.error === 'access_denied' ? 'the consent was refused' : `the authorization server said ${outcome.error.slice(0, 100)}`;
      throw new McpLoginError(
        `server ${server}: login not completed: ${refused}${outcome.description ? ` (${outcome.description.slice(0, 300)})` : ''}`,
      );
    }
    try {
      // The SDK checks `iss` against the issuer discovered (RFC 9207) before it redeems the code.
      await transport.finishAuth(outcome.code, outcome.iss);
    } catch (error) {
      const redactor = waiting?.redactor ?? connection?.redactor;
      throw new McpLoginError(
        `server ${server}: the code was not taken: ${redactor ? redactor.text(said(error)) : 'see the authorization server'}`,
      );
    }
    // A login's state is good for one redirect.
    await provider.forgetState();
    if (waiting) this.waiting.delete(server);
    return waiting;
  }

  /**
   * What OAuth itself failed with, if it did: an OAuth response over the bound (whatever the
   * SDK made of it), or, for a grant that needs no person, the authorization server's refusal.
   */
  failure(server: string, error: unknown, redactor: SecretRedactor): Error | undefined {
    const bounded = this.fetches.get(server);
    const tripped = bounded?.tripped;
    if (bounded && tripped) {
      bounded.tripped = undefined;
      return tripped;
    }
    if (error instanceof McpLoginError || isOAuthRefusal(error)) return error;
    const provider = this.providers.get(server);
    if (!provider || provider instanceof LoginOAuthProvider || error instanceof UnauthorizedError) return undefined;
    if (!(error instanceof OAuthError)) return undefined;
    const grant = provider.clientMetadata.grant_types?.[0] ?? 'OAuth';
    // The OAuth error code says what to fix (invalid_grant: the assertion; invalid_scope; unauthorized_client).
    const code = typeof error.code === 'string' ? `${error.code.slice(0, 100)}: ` : '';
    return new McpLoginError(`server ${server}: the authorization server refused the ${grant} grant: ${code}${redactor.text(said(error))}`);
  }

  /** The transport refused for want of a login: the URL the provider was handed, or a plain failure. */
  required(server: string, error: UnauthorizedError): Error {
    const provider = this.providers.get(server);
    const url = provider?.loginUrl;
    if (provider) provider.loginUrl = undefined;
    if (!url) return new McpLoginError(`server ${server}: authorization failed (${said(error)})`);
    return new McpLoginRequiredError(`server ${server}: a login is needed at its authorization server`, server, url.href);
  }

  /**
   * A call the server refused for want of a login (its tokens expired and would not refresh, or
   * it wants another scope): suspended as a request of kind `authorization` with the URL.
   */
  pending(server: string, tool: string, login: Error): ToolResult {
    if (!(login instanceof McpLoginRequiredError)) return failure(`MCP server ${server}, tool ${tool}: ${login.message}`);
    return pending({
      kind: 'authorization',
      prompt: `Log in to the MCP server ${server} to continue (tool ${tool})`,
      url: login.url,
      data: { mcpServer: server },
    });
  }

  /**
   * On the replay after a login request this source made: a refusal ends the call; an answer
   * carrying `code` (or the `redirect` URL) finishes the login first, through `finish`. An
   * answer without one means the host called `finishLogin` itself. `undefined` when the call
   * should go ahead.
   */
  async answered(
    server: string,
    ctx: ToolContext | undefined,
    finish: (server: string, outcome: LoginOutcome) => Promise<unknown>,
  ): Promise<ToolResult | undefined> {
    const request = ctx?.replay?.request;
    const answer = ctx?.answer;
    if (!request || !answer || request.kind !== 'authorization' || request.data?.mcpServer !== server || answer.id !== request.id)
      return undefined;
    if (!answer.ok) return failure(`MCP server ${server}: the login was ${answer.reason ?? 'declined'}, so the call did not run`);
    const redirect = answer.data?.redirect;
    const outcome = typeof redirect === 'string' ? loginOutcome(redirect) : undefined;
    // An answer is wire data: only a redirect, whose state ties it to this login, is taken.
    if ((outcome && 'code' in outcome && outcome.bare) || (!outcome && answer.data?.code !== undefined))
      return failure(
        `MCP server ${server}: a login request is answered with the redirect URL (data.redirect), whose state is checked; a bare code is taken only by finishLogin`,
      );
    if (!outcome) return undefined;
    try {
      await finish(server, outcome);
      return undefined;
    } catch (error) {
      return failure(messageOf(error));
    }
  }

  /** The OAuth provider of a remote server the `oauth` option covers; made once per server. */
  private providerOf(server: string, spec: McpServerSpec, redactor: SecretRedactor): StoredOAuthProvider | undefined {
    if (spec.transport === 'stdio') return undefined;
    const own = spec.oauth;
    const oauth = this.oauth;
    if (own === false) return undefined;
    if (!oauth) {
      if (own === undefined) return undefined;
      throw new McpConfigError(
        `server ${server}: its config asks for oauth, but this McpToolSource has no oauth option (a store and a redirect URL)`,
      );
    }
    if (own === undefined && oauth.servers && !oauth.servers.includes(server)) return undefined;
    let provider = this.providers.get(server);
    if (!provider) {
      const limit = oauth.maxResponseBytes ?? DEFAULT_OAUTH_RESPONSE_BYTES;
      if (!Number.isInteger(limit) || limit < 1) throw new McpConfigError(`oauth.maxResponseBytes must be a positive whole number`);
      const bounded = new BoundedOAuthFetch(server, spec.url, limit, allowedOriginsOf(oauth));
      provider = oauthProvider(server, spec.url, { ...oauth, ...own }, redactor, bounded.fetch);
      const made = provider;
      bounded.tokenRefused = () => made.rediscover();
      this.providers.set(server, provider);
      this.fetches.set(server, bounded);
    }
    return provider;
  }
}

/**
 * Whether the host allowed OAuth to reach an origin besides each server's own: its list (or
 * its function), and the IdP it named for cross_app.
 */
function allowedOriginsOf(oauth: McpOAuthOptions): (origin: string) => boolean {
  const { allowedOrigins } = oauth;
  const named = [...(Array.isArray(allowedOrigins) ? (allowedOrigins as readonly string[]) : [])];
  if (oauth.grant === 'cross_app') named.push(oauth.idpTokenEndpoint);
  const origins = new Set(
    named.map((url) => {
      let origin: string | undefined;
      try {
        origin = new URL(url).origin;
      } catch {
        origin = undefined;
      }
      if (origin === undefined || origin === 'null')
        throw new McpConfigError(`oauth.allowedOrigins: ${url.slice(0, 100)} is not a URL with an origin (https://auth.example.com)`);
      return origin;
    }),
  );
  const decide = typeof allowedOrigins === 'function' ? allowedOrigins : undefined;
  return (origin) => {
    if (origins.has(origin)) return true;
    try {
      return decide?.(origin) === true;
    } catch {
      return false; // a function that throws allows nothing
    }
  };
}
