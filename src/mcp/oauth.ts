import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * What an {@link McpOAuthStore} keeps per server: `tokens` (access and refresh token),
 * `client` (the registration, dynamic or given), `verifier` (the PKCE code verifier of the
 * login under way), `discovery` (where the server's authorization server was found).
 */
export type McpOAuthRecord = 'tokens' | 'client' | 'verifier' | 'discovery';

/** A stored value: the verifier is a string, the others JSON objects as the authorization server gave them. */
export type McpOAuthValue = string | Record<string, unknown>;

/**
 * Where the OAuth state of each remote MCP server lives: the host's (a keychain, an encrypted
 * row). Every value is a secret: this library never logs it, never puts it in a message, a
 * result or a report. `set(server, record, undefined)` forgets a value.
 */
export interface McpOAuthStore {
  get(server: string, record: McpOAuthRecord): McpOAuthValue | undefined | Promise<McpOAuthValue | undefined>;
  set(server: string, record: McpOAuthRecord, value: McpOAuthValue | undefined): void | Promise<void>;
}

/** An {@link McpOAuthStore} in this process's memory: for tests and a single process. */
export class MemoryOAuthStore implements McpOAuthStore {
  private readonly values = new Map<string, McpOAuthValue>();

  get(server: string, record: McpOAuthRecord): McpOAuthValue | undefined {
    return this.values.get(`${server}\u0000${record}`);
  }

  set(server: string, record: McpOAuthRecord, value: McpOAuthValue | undefined): void {
    const key = `${server}\u0000${record}`;
    if (value === undefined) this.values.delete(key);
    else this.values.set(key, value);
  }
}

/**
 * OAuth for the remote (HTTP, SSE) servers of an `McpToolSource`, as the MCP authorization
 * spec describes a client: protected-resource metadata, authorization-server discovery,
 * dynamic client registration, PKCE, silent refresh (docs/mcp.md, "OAuth").
 */
export interface McpOAuthOptions {
  /** Where tokens, registrations and verifiers are kept. */
  store: McpOAuthStore;
  /** Where the authorization server sends the browser back with `?code=` (the host serves it). */
  redirectUrl: string;
  /** The name authorization servers show at consent. Default `toolnexus`. */
  clientName?: string;
  /** The scope asked for when neither the server's challenge nor its metadata names one. */
  scope?: string;
  /** A client registered beforehand (no dynamic registration then). */
  clientId?: string;
  /** Its secret, when it is a confidential client. */
  clientSecret?: string;
  /** A Client ID Metadata Document URL (https), used as client_id where the server supports it. */
  clientMetadataUrl?: string;
  /** Which servers (by config name) use OAuth. Default: every HTTP and SSE server. */
  servers?: string[];
}

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
