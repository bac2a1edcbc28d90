import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpOAuthOptions, McpOAuthRecord } from './oauth-store';

export { MemoryOAuthStore } from './oauth-store';
export type { McpOAuthOptions, McpOAuthRecord, McpOAuthStore, McpOAuthValue } from './oauth-store';

/**
 * The SDK's {@link OAuthClientProvider} for one server over the host's store. The transport
 * asks it for tokens, refreshes them silently, and calls `redirectToAuthorization` when a
 * person has to log in: that URL is kept here for the source to hand on as a login request.
 */
export class StoredOAuthProvider implements OAuthClientProvider {
  /** The authorization URL of the login the last request needed; cleared once read. */
  loginUrl: URL | undefined;
  readonly clientMetadataUrl?: string;

  constructor(
    private readonly server: string,
    private readonly options: McpOAuthOptions,
    /** Told every secret this provider reads or saves, so that the server's mask hides it. */
    private readonly reveal: (secrets: string[]) => void,
  ) {
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName ?? 'toolnexus',
      redirect_uris: [this.options.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.options.clientSecret !== undefined ? 'client_secret_basic' : 'none',
      ...(this.options.scope !== undefined ? { scope: this.options.scope } : {}),
    };
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const stored = await this.options.store.get(this.server, 'client');
    if (typeof stored === 'object') {
      if (typeof stored.client_secret === 'string') this.reveal([stored.client_secret]);
      return stored as unknown as OAuthClientInformationMixed;
    }
    if (this.options.clientSecret !== undefined) this.reveal([this.options.clientSecret]);
    if (this.options.clientId === undefined) return undefined;
    return {
      client_id: this.options.clientId,
      ...(this.options.clientSecret !== undefined ? { client_secret: this.options.clientSecret } : {}),
    };
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    if ('client_secret' in information && typeof information.client_secret === 'string') this.reveal([information.client_secret]);
    await this.options.store.set(this.server, 'client', { ...information });
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    const stored = await this.options.store.get(this.server, 'tokens');
    if (typeof stored !== 'object') return undefined;
    this.reveal(tokenSecrets(stored as unknown as OAuthTokens));
    return stored as unknown as OAuthTokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.reveal(tokenSecrets(tokens));
    await this.options.store.set(this.server, 'tokens', { ...tokens });
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.loginUrl = authorizationUrl;
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.options.store.set(this.server, 'verifier', codeVerifier);
  }

  async codeVerifier(): Promise<string> {
    const stored = await this.options.store.get(this.server, 'verifier');
    if (typeof stored !== 'string') throw new Error(`no login is under way for MCP server ${this.server}`);
    return stored;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.options.store.set(this.server, 'discovery', JSON.parse(JSON.stringify(state)) as Record<string, unknown>);
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    const stored = await this.options.store.get(this.server, 'discovery');
    return typeof stored === 'object' ? (stored as unknown as OAuthDiscoveryState) : undefined;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const records: McpOAuthRecord[] =
      scope === 'all' ? ['tokens', 'client', 'verifier', 'discovery'] : [scope === 'client' ? 'client' : scope];
    for (const record of records) await this.options.store.set(this.server, record, undefined);
  }
}

function tokenSecrets(tokens: OAuthTokens): string[] {
  return [tokens.access_token, tokens.refresh_token].filter((value): value is string => typeof value === 'string');
}

/**
 * The code (or the refusal) in what the browser was sent back to: a redirect URL with
 * `?code=` or `?error=`, or the bare code.
 */
export function loginOutcome(codeOrRedirect: string): { code: string } | { error: string; description?: string } {
  const text = codeOrRedirect.trim();
  if (!/^https?:\/\//i.test(text)) return { code: text };
  const url = new URL(text);
  const error = url.searchParams.get('error');
  if (error !== null) {
    const description = url.searchParams.get('error_description');
    return { error, ...(description !== null ? { description } : {}) };
  }
  const code = url.searchParams.get('code');
  if (code === null) return { error: 'invalid_request', description: 'the redirect carries neither code nor error' };
  return { code };
}
