import { randomBytes } from 'node:crypto';
import type {
  AddClientAuthentication,
  OAuthClientInformationContext,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthTokens,
  DpopSession,
} from '@modelcontextprotocol/client';
import { McpConfigError, McpLoginError, McpLoginStateError, isOAuthRefusal } from '../errors';
import type { SecretRedactor } from '../redactor';
import { ClientAssertionSigner } from './assertion';
import { DpopKeys } from './dpop';
import type { FetchLike } from './fetch';
import { sameIssuer, sameText, tokenSecrets } from './kept';
import type {
  McpOAuthClientCredentialsOptions,
  McpOAuthCrossAppOptions,
  McpOAuthJwtBearerOptions,
  McpOAuthLoginOptions,
  McpOAuthOptions,
  McpOAuthRecord,
} from './store';

export { MemoryOAuthStore } from './store';
export type { McpOAuthOptions, McpOAuthRecord, McpOAuthStore, McpOAuthValue } from './store';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';

/**
 * The SDK's {@link OAuthClientProvider} for one server over the host's store: tokens, the
 * client's registration and the discovery live there, and every secret read or saved is told
 * to the server's mask. The grant is the subclass's: a person's login, or none (machine to
 * machine), where `redirectUrl` is undefined and the SDK asks `prepareTokenRequest` instead.
 */
export abstract class StoredOAuthProvider implements OAuthClientProvider {
  /** The authorization URL of the login the last request needed; cleared once read. */
  loginUrl: URL | undefined;
  /**
   * The DPoP key's session when `dpop` is on (RFC 9449): the SDK then signs a proof into each
   * token request and presents a DPoP-bound token with the `DPoP` scheme and a fresh proof.
   * Absent otherwise, which the SDK reads as "Bearer tokens".
   */
  readonly dpop?: () => Promise<DpopSession>;
  private readonly dpopKeys?: DpopKeys;
  /** Set when the server refused a token: the kept discovery is read again before it is used. */
  private stale = false;

  constructor(
    protected readonly server: string,
    protected readonly options: McpOAuthOptions,
    /** The server's mask: told every secret this provider reads, saves or makes. */
    protected readonly redactor: SecretRedactor,
  ) {
    const { dpop } = options;
    if (dpop) {
      const keys = new DpopKeys(server, options.store, (dpop === true ? undefined : dpop.alg) ?? 'ES256', redactor);
      this.dpopKeys = keys;
      this.dpop = () => keys.current();
    }
  }

  abstract get redirectUrl(): string | undefined;
  abstract get clientMetadata(): OAuthClientMetadata;

  /** The client given in the options, when the store has none (or forgot it). */
  protected abstract givenClient(): OAuthClientInformationMixed | undefined;

  protected get store(): McpOAuthOptions['store'] {
    return this.options.store;
  }

  /** Redacts a client's secret and the HTTP Basic credentials made of it, as a server may quote them. */
  protected revealClient(information: OAuthClientInformationMixed | Record<string, unknown>): void {
    const id = information.client_id;
    const secret = information.client_secret;
    if (typeof secret !== 'string') return;
    const forms = [secret];
    if (typeof id === 'string')
      for (const pair of [`${id}:${secret}`, `${encodeURIComponent(id)}:${encodeURIComponent(secret)}`])
        forms.push(Buffer.from(pair).toString('base64'));
    this.redactor.add(forms);
  }

  /**
   * The registration kept for this server, when it was made with the authorization server
   * `ctx.issuer` names (credentials are keyed by issuer, SEP-2352: when the server moves to
   * another authorization server the client registers there anew); else the client given in
   * the options. A registration kept before issuers were recorded is taken as it is.
   */
  async clientInformation(ctx?: OAuthClientInformationContext): Promise<OAuthClientInformationMixed | undefined> {
    const stored = await this.store.get(this.server, 'client');
    if (typeof stored === 'object' && sameIssuer(stored, ctx)) {
      this.revealClient(stored);
      return stored as unknown as OAuthClientInformationMixed;
    }
    const given = this.givenClient();
    if (given) this.revealClient(given);
    // The host's own client is for whichever authorization server asks: stamped with its issuer, as a registration is.
    return given && ctx ? { ...given, issuer: ctx.issuer } : given;
  }

  async saveClientInformation(information: OAuthClientInformationMixed, ctx?: OAuthClientInformationContext): Promise<void> {
    this.revealClient(information);
    await this.store.set(this.server, 'client', { ...information, ...(ctx ? { issuer: ctx.issuer } : {}) });
  }

  /** The tokens kept for this server, when the authorization server `ctx.issuer` names issued them. */
  async tokens(ctx?: OAuthClientInformationContext): Promise<OAuthTokens | undefined> {
    const stored = await this.store.get(this.server, 'tokens');
    if (typeof stored !== 'object' || !sameIssuer(stored, ctx)) return undefined;
    this.redactor.add(tokenSecrets(stored as unknown as OAuthTokens));
    return stored as unknown as OAuthTokens;
  }

  async saveTokens(tokens: OAuthTokens, ctx?: OAuthClientInformationContext): Promise<void> {
    this.redactor.add(tokenSecrets(tokens));
    await this.store.set(this.server, 'tokens', { ...tokens, ...(ctx ? { issuer: ctx.issuer } : {}) });
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.loginUrl = authorizationUrl;
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.store.set(this.server, 'verifier', codeVerifier);
  }

  async codeVerifier(): Promise<string> {
    const stored = await this.store.get(this.server, 'verifier');
    if (typeof stored !== 'string') throw new McpLoginError(`server ${this.server}: no login is under way for it`);
    return stored;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    this.stale = false;
    await this.store.set(this.server, 'discovery', JSON.parse(JSON.stringify(state)) as Record<string, unknown>);
  }

  /**
   * The discovery kept for this server. Once the server refused a token ({@link rediscover})
   * it is handed without its authorization server, so the SDK reads the protected-resource
   * metadata again (SEP-2352: the server may name a new authorization server, where the client
   * registers anew, its credentials being keyed by issuer); the issuer kept is still what a
   * login under way is checked against.
   */
  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    const stored = await this.store.get(this.server, 'discovery');
    if (typeof stored !== 'object') return undefined;
    if (!this.stale) return stored as unknown as OAuthDiscoveryState;
    const { authorizationServerUrl: _dropped, resourceMetadata: _read, ...rest } = stored;
    return rest as unknown as OAuthDiscoveryState;
  }

  /** The server refused a token it was given: the next authorization reads its metadata anew. */
  rediscover(): void {
    this.stale = true;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    const records: McpOAuthRecord[] =
      scope === 'all' ? ['tokens', 'client', 'verifier', 'state', 'discovery'] : scope === 'verifier' ? ['verifier', 'state'] : [scope];
    for (const record of records) await this.store.set(this.server, record, undefined);
    // Every credential forgotten: the key goes too (a token refused for its proof keeps it).
    if (scope === 'all') await this.dpopKeys?.forget();
  }

  /**
   * The client metadata registered for a grant. The scope given here is asked for only when
   * the server's challenge and metadata name none (the SDK's choice).
   */
  protected metadataOf(grantTypes: string[], authMethod: string, redirectUris: string[] = []): OAuthClientMetadata {
    return {
      client_name: this.options.clientName ?? 'toolnexus',
      redirect_uris: redirectUris,
      grant_types: grantTypes,
      token_endpoint_auth_method: authMethod,
      ...(this.options.scope !== undefined ? { scope: this.options.scope } : {}),
    };
  }
}

/** A person's login: authorization code with PKCE and a `state` kept beside the verifier. */
export class LoginOAuthProvider extends StoredOAuthProvider {
  readonly clientMetadataUrl?: string;

  constructor(
    server: string,
    protected override readonly options: McpOAuthLoginOptions,
    redactor: SecretRedactor,
  ) {
    super(server, options, redactor);
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const method = this.options.clientSecret !== undefined ? 'client_secret_basic' : 'none';
    return { ...this.metadataOf(['authorization_code', 'refresh_token'], method, [this.options.redirectUrl]), response_types: ['code'] };
  }

  protected givenClient(): OAuthClientInformationMixed | undefined {
    if (this.options.clientId === undefined) return undefined;
    return {
      client_id: this.options.clientId,
      ...(this.options.clientSecret !== undefined ? { client_secret: this.options.clientSecret } : {}),
    };
  }

  /** A new random `state` for each login the SDK starts, kept in the store until it is finished. */
  async state(): Promise<string> {
    const state = randomBytes(32).toString('base64url');
    await this.store.set(this.server, 'state', state);
    return state;
  }

  /**
   * Refuses a redirect whose `state` is missing or not this login's: it may be another login's
   * code, or a forged one (login CSRF). Nothing is changed, so the right redirect still works.
   */
  async checkState(state: string | undefined): Promise<void> {
    const kept = await this.store.get(this.server, 'state');
    if (state === undefined)
      throw new McpLoginStateError(`server ${this.server}: the redirect carries no state, so it cannot be tied to this login; refused`);
    if (typeof kept !== 'string' || !sameText(kept, state))
      throw new McpLoginStateError(`server ${this.server}: the redirect's state is not the one of the login under way; refused`);
  }

  /** Ends the state's use once its redirect was taken. */
  async forgetState(): Promise<void> {
    await this.store.set(this.server, 'state', undefined);
  }
}

/**
 * `client_credentials` (as the SDK's `ClientCredentialsProvider` and `PrivateKeyJwtProvider`,
 * over the host's store) with `client_secret_basic` or `private_key_jwt`.
 */
export class ClientCredentialsOAuthProvider extends StoredOAuthProvider {
  readonly addClientAuthentication?: AddClientAuthentication;

  constructor(
    server: string,
    protected override readonly options: McpOAuthClientCredentialsOptions,
    redactor: SecretRedactor,
  ) {
    super(server, options, redactor);
    if ((options.clientSecret === undefined) === (options.privateKey === undefined))
      throw new McpConfigError(`server ${server}: the client_credentials grant takes exactly one of clientSecret and privateKey`);
    if (options.clientSecret !== undefined) this.revealClient({ client_id: options.clientId, client_secret: options.clientSecret });
    const { privateKey } = options;
    if (privateKey !== undefined) {
      if (typeof privateKey === 'string') redactor.add([privateKey]);
      const signer = new ClientAssertionSigner(server, options.clientId, privateKey, options.algorithm ?? 'RS256');
      this.addClientAuthentication = (_headers, params, url, metadata) => {
        const assertion = signer.assertion(String(metadata?.issuer ?? url));
        // The assertion is a credential too: redacted before anything can echo it.
        redactor.add([assertion]);
        params.set('client_assertion', assertion);
        params.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      };
    }
  }

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return this.metadataOf(['client_credentials'], this.options.privateKey !== undefined ? 'private_key_jwt' : 'client_secret_basic');
  }

  protected givenClient(): OAuthClientInformationMixed {
    const { clientId, clientSecret } = this.options;
    return { client_id: clientId, ...(clientSecret !== undefined ? { client_secret: clientSecret } : {}) };
  }

  prepareTokenRequest(scope?: string): URLSearchParams {
    return new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
  }
}

/**
 * Enterprise cross-app access (SEP-990): the IdP's ID token is exchanged at the IdP for an
 * ID-JAG whose audience is the MCP server's authorization server and whose resource is the
 * MCP server (both from the discovery the SDK has just stored), then given to that
 * authorization server as a JWT bearer grant, the client authenticated with HTTP Basic.
 */
export class CrossAppOAuthProvider extends StoredOAuthProvider {
  constructor(
    server: string,
    protected override readonly options: McpOAuthCrossAppOptions,
    redactor: SecretRedactor,
    private readonly serverUrl: string,
    /** The bounded fetch: the IdP's answer is read like any other OAuth response. */
    private readonly fetchFn: FetchLike,
  ) {
    super(server, options, redactor);
    this.revealClient({ client_id: options.clientId, client_secret: options.clientSecret });
    if (options.idpClientSecret !== undefined)
      this.revealClient({ client_id: options.idpClientId ?? '', client_secret: options.idpClientSecret });
  }

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return this.metadataOf([JWT_BEARER], 'client_secret_basic');
  }

  protected givenClient(): OAuthClientInformationMixed {
    return { client_id: this.options.clientId, client_secret: this.options.clientSecret };
  }

  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    const discovery = await this.discoveryState();
    const issuer = discovery?.authorizationServerMetadata?.issuer ?? discovery?.authorizationServerUrl;
    if (issuer === undefined)
      throw new McpLoginError(`server ${this.server}: its authorization server is not known, so no cross-app grant can be asked for`);
    const resource = discovery?.resourceMetadata?.resource ?? this.serverUrl;
    const assertion = await this.exchange(String(issuer), String(resource), scope);
    return new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...(scope ? { scope } : {}) });
  }

  /** RFC 8693 at the IdP: the ID token for an ID-JAG for `audience` and `resource`. */
  private async exchange(audience: string, resource: string, scope: string | undefined): Promise<string> {
    const idToken = await this.options.idToken();
    this.redactor.add([idToken]);
    const { idpClientId, idpClientSecret } = this.options;
    const form = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE,
      subject_token: idToken,
      subject_token_type: ID_TOKEN,
      requested_token_type: ID_JAG,
      audience,
      resource,
      ...(scope ? { scope } : {}),
      ...(idpClientId !== undefined && idpClientSecret === undefined ? { client_id: idpClientId } : {}),
    });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (idpClientId !== undefined && idpClientSecret !== undefined) {
      const basic = `${encodeURIComponent(idpClientId)}:${encodeURIComponent(idpClientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
    }
    const endpoint = new URL(this.options.idpTokenEndpoint);
    let response: Response;
    try {
      response = await this.fetchFn(endpoint, { method: 'POST', headers, body: form.toString(), redirect: 'error' });
    } catch (error) {
      if (isOAuthRefusal(error)) throw error;
      throw new McpLoginError(`server ${this.server}: the identity provider's token endpoint did not answer: ${this.said(error)}`);
    }
    const body = await response.text();
    let answer: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(body);
      if (typeof parsed === 'object' && parsed !== null) answer = parsed as Record<string, unknown>;
    } catch {
      // Said below: neither a grant nor an OAuth error.
    }
    const granted = answer.access_token;
    if (!response.ok || typeof granted !== 'string' || granted === '') {
      const code = typeof answer.error === 'string' ? answer.error.slice(0, 100) : `HTTP ${response.status}`;
      const description = typeof answer.error_description === 'string' ? ` (${answer.error_description.slice(0, 300)})` : '';
      throw new McpLoginError(
        this.redactor.text(`server ${this.server}: the identity provider refused the token exchange: ${code}${description}`),
      );
    }
    this.redactor.add([granted]);
    if (answer.issued_token_type !== undefined && answer.issued_token_type !== ID_JAG)
      throw new McpLoginError(`server ${this.server}: the identity provider issued a token that is not an ID-JAG`);
    return granted;
  }

  private said(error: unknown): string {
    return this.redactor.text(error instanceof Error ? error.message : String(error)).slice(0, 300);
  }
}

/**
 * Workload identity federation (SEP-1933): the workload's own identity token, read anew for
 * each grant, given to the authorization server as an RFC 7523 JWT bearer grant by a public
 * client registered beforehand (its `client_id` in the form, no secret).
 */
export class JwtBearerOAuthProvider extends StoredOAuthProvider {
  constructor(
    server: string,
    protected override readonly options: McpOAuthJwtBearerOptions,
    redactor: SecretRedactor,
  ) {
    super(server, options, redactor);
    if (typeof options.assertion !== 'function')
      throw new McpConfigError(`server ${server}: the jwt_bearer grant needs assertion, a function giving the workload's identity token`);
  }

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return this.metadataOf([JWT_BEARER], 'none');
  }

  protected givenClient(): OAuthClientInformationMixed {
    return { client_id: this.options.clientId };
  }

  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    const assertion = await this.options.assertion();
    if (typeof assertion !== 'string' || assertion === '')
      throw new McpLoginError(`server ${this.server}: the workload's identity token (oauth.assertion) is empty`);
    // The workload's token is a credential: redacted before an authorization server can echo it.
    this.redactor.add([assertion]);
    return new URLSearchParams({ grant_type: JWT_BEARER, assertion, ...(scope ? { scope } : {}) });
  }
}

/** The provider of the grant the options name. */
export function oauthProvider(
  server: string,
  serverUrl: string,
  options: McpOAuthOptions,
  redactor: SecretRedactor,
  fetchFn: FetchLike,
): StoredOAuthProvider {
  if (options.grant === 'client_credentials') return new ClientCredentialsOAuthProvider(server, options, redactor);
  if (options.grant === 'cross_app') return new CrossAppOAuthProvider(server, options, redactor, serverUrl, fetchFn);
  if (options.grant === 'jwt_bearer') return new JwtBearerOAuthProvider(server, options, redactor);
  return new LoginOAuthProvider(server, options, redactor);
}
