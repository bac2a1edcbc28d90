/**
 * The public side of OAuth for McpToolSource: the store and the options, in a file that names
 * nothing of the MCP SDK (as ./types.ts), so the declarations a user compiles from
 * `toolnexus-ts/mcp` never reach the SDK's (and zod's) types. The SDK's provider is ./oauth.ts.
 */
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
