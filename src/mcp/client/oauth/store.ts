/**
 * The public side of OAuth for McpToolSource: the store and the options, in a file that names
 * nothing of the MCP SDK (as ./types.ts), so the declarations a user compiles from
 * `toolnexus-ts/mcp` never reach the SDK's (and zod's) types. The SDK's provider is ./oauth.ts.
 */
/**
 * What an {@link McpOAuthStore} keeps per server: `tokens` (access and refresh token),
 * `client` (the registration, dynamic or given), `verifier` (the PKCE code verifier of the
 * login under way), `state` (the OAuth `state` of that login, checked on the redirect),
 * `discovery` (where the server's authorization server was found), `dpop` (the private key
 * DPoP-bound tokens are bound to, as a JWK, when `dpop` is on).
 */
export type McpOAuthRecord = 'tokens' | 'client' | 'verifier' | 'state' | 'discovery' | 'dpop';

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

/** What every grant's options share. */
export interface McpOAuthCommonOptions {
  /** Where tokens, registrations, verifiers and states are kept. */
  store: McpOAuthStore;
  /** The name authorization servers show at consent and registration. Default `toolnexus`. */
  clientName?: string;
  /** The scope asked for when neither the server's challenge nor its metadata names one. */
  scope?: string;
  /** Which servers (by config name) use OAuth. Default: every HTTP and SSE server. */
  servers?: string[];
  /**
   * The largest body read from an authorization server or identity provider (discovery
   * metadata, registration, token responses), in bytes; a larger one fails the server with an
   * `McpOAuthResponseTooLargeError`. Default 1 MiB.
   */
  maxResponseBytes?: number;
  /**
   * Origins besides each MCP server's own that OAuth may reach: discovery (the challenge's
   * `resource_metadata`, the metadata's authorization servers), registration and token
   * requests, and redirects. An authorization server on a host of its own must be named
   * (`['https://auth.example.com']`); anything else is refused with an `McpOAuthOriginError`
   * before a request is sent. The cross_app `idpTokenEndpoint` is allowed as configured.
   * A function decides per origin (`scheme://host:port`), for hosts whose authorization
   * servers' ports are not known beforehand.
   */
  allowedOrigins?: readonly string[] | ((origin: string) => boolean);
  /**
   * DPoP (RFC 9449, the MCP auth extension SEP-1932): tokens bound to a key of this client,
   * so a stolen token is of no use without it. Each token request carries a proof signed by
   * the key, and a token the authorization server issues as `DPoP` is presented with the
   * `DPoP` scheme and a fresh proof on every request; a server's `use_dpop_nonce` challenge is
   * answered with its nonce. `true` signs with ES256. The key is made on first use and kept in
   * the store (record `dpop`), so tokens stay usable across a restart. Default off.
   */
  dpop?: boolean | McpDpopOptions;
}

/** The JWS algorithms a DPoP proof may be signed with (asymmetric only, RFC 9449 section 11.6). */
export type McpDpopAlgorithm = 'ES256' | 'ES384' | 'ES512' | 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'EdDSA';

/** {@link McpOAuthCommonOptions.dpop} with a choice of algorithm. */
export interface McpDpopOptions {
  /** The proofs' signing algorithm; match the authorization server's `dpop_signing_alg_values_supported`. Default `ES256`. */
  alg?: McpDpopAlgorithm;
}

/**
 * A person's login (the default grant): authorization code with PKCE and `state`, dynamic
 * client registration or a client registered beforehand, silent refresh.
 */
export interface McpOAuthLoginOptions extends McpOAuthCommonOptions {
  grant?: 'authorization_code';
  /** Where the authorization server sends the browser back with `?code=` (the host serves it). */
  redirectUrl: string;
  /** A client registered beforehand (no dynamic registration then). */
  clientId?: string;
  /** Its secret, when it is a confidential client. */
  clientSecret?: string;
  /** A Client ID Metadata Document URL (https), used as client_id where the server supports it. */
  clientMetadataUrl?: string;
}

/**
 * No person: the client's own credentials (OAuth `client_credentials`, SEP-1046), with a
 * secret (`client_secret_basic`) or a private key that signs an assertion (`private_key_jwt`,
 * RFC 7523). Give exactly one of `clientSecret` and `privateKey`.
 */
export interface McpOAuthClientCredentialsOptions extends McpOAuthCommonOptions {
  grant: 'client_credentials';
  clientId: string;
  /** Sent as HTTP Basic to the token endpoint (`client_secret_basic`). */
  clientSecret?: string;
  /** A PKCS#8 PEM private key (or a JWK) that signs the client assertion (`private_key_jwt`). */
  privateKey?: string | Record<string, unknown>;
  /** The assertion's signing algorithm (`ES256`, `RS256`...). Default `RS256`. */
  algorithm?: string;
}

/**
 * No consent screen: enterprise cross-app access (SEP-990). The user's ID token from the
 * enterprise identity provider (IdP) is exchanged there for an identity assertion grant
 * (ID-JAG, RFC 8693 token exchange), which the MCP server's authorization server takes as a
 * JWT bearer grant (RFC 7523) from this client, authenticated with `client_secret_basic`.
 */
export interface McpOAuthCrossAppOptions extends McpOAuthCommonOptions {
  grant: 'cross_app';
  /** This client at the MCP server's authorization server. */
  clientId: string;
  clientSecret: string;
  /** The signed-in user's ID token from the IdP; asked each time a new grant is needed. */
  idToken: () => string | Promise<string>;
  /** The IdP's token endpoint, where the ID token is exchanged. */
  idpTokenEndpoint: string;
  /** This client at the IdP (sent as `client_id`, or with `idpClientSecret` as HTTP Basic). */
  idpClientId?: string;
  idpClientSecret?: string;
}

/**
 * No person and no secret: workload identity federation (SEP-1933). The workload's own
 * identity token (a Kubernetes service-account token, a cloud's instance identity, a CI job's
 * OIDC token), whose audience is the MCP server's authorization server, is given to that
 * server as a JWT bearer grant (RFC 7523, `urn:ietf:params:oauth:grant-type:jwt-bearer`); the
 * client is public (`token_endpoint_auth_method: none`) and registered beforehand. A refused
 * assertion fails the server with the authorization server's error; no other grant is tried.
 */
export interface McpOAuthJwtBearerOptions extends McpOAuthCommonOptions {
  grant: 'jwt_bearer';
  /** This workload's client at the authorization server. */
  clientId: string;
  /**
   * The workload's identity token (a JWT), read each time a token is asked for: platforms
   * rotate it (a projected token file is read again), so it is never kept.
   */
  assertion: () => string | Promise<string>;
}

/**
 * OAuth for the remote (HTTP, SSE) servers of an `McpToolSource`, as the MCP authorization
 * spec describes a client: protected-resource metadata, authorization-server discovery, then
 * one grant: a person's login (the default), the client's own credentials, enterprise
 * cross-app access, or the workload's identity (docs/mcp.md, "OAuth"); DPoP-bound or not.
 */
export type McpOAuthOptions = McpOAuthLoginOptions | McpOAuthClientCredentialsOptions | McpOAuthCrossAppOptions | McpOAuthJwtBearerOptions;

/** The default {@link McpOAuthCommonOptions.maxResponseBytes}: 1 MiB. */
export const DEFAULT_OAUTH_RESPONSE_BYTES = 1024 * 1024;
