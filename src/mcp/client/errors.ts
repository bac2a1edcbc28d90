import { ToolnexusError } from '../../errors';

/** An MCP server configuration (an `mcp.json`) that cannot be used: a wrong shape, a missing variable. */
export class McpConfigError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_CONFIG';
}

/** An MCP server could not be reached, or dropped the connection and could not be reached again. */
export class McpConnectionError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_CONNECTION';
}

/**
 * A remote MCP server needs a person to log in before it answers: `url` is the authorization
 * URL to open (it carries no secret: PKCE keeps the verifier in the host's store).
 */
export class McpLoginRequiredError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_LOGIN_REQUIRED';

  constructor(
    message: string,
    readonly server: string,
    readonly url: string,
  ) {
    super(message);
  }
}

/** A login to a remote MCP server that did not complete: consent refused, or a code the server would not take. */
export class McpLoginError extends ToolnexusError {
  override readonly code: string = 'TOOLNEXUS_MCP_LOGIN';
}

/**
 * A redirect handed to `finishLogin` whose OAuth `state` is missing or is not the one of the
 * login this client started: it may be another login's, or forged. Nothing is exchanged or
 * stored; the login under way can still be finished with its own redirect.
 */
export class McpLoginStateError extends McpLoginError {
  override readonly code = 'TOOLNEXUS_MCP_LOGIN_STATE';
}

/**
 * A refusal of the OAuth client's own, about one MCP server (`server`, which its message
 * starts with): the server is not connected, and a connect report keeps the refusal's class
 * and message ({@link isOAuthRefusal}).
 */
export abstract class McpOAuthRefusalError extends ToolnexusError {
  constructor(
    readonly server: string,
    detail: string,
  ) {
    super(`server ${server}: ${detail}`);
  }
}

/**
 * An authorization server or identity provider sent a body larger than the client reads
 * (`oauth.maxResponseBytes`): discovery metadata, a registration, a token response. Reading
 * stopped there; the server is not connected. `url` is the address without its query.
 */
export class McpOAuthResponseTooLargeError extends McpOAuthRefusalError {
  override readonly code = 'TOOLNEXUS_MCP_OAUTH_RESPONSE_TOO_LARGE';

  constructor(
    server: string,
    readonly url: string,
    readonly limitBytes: number,
  ) {
    super(server, `${url} sent an OAuth response larger than ${limitBytes} bytes (the oauth.maxResponseBytes limit); reading stopped`);
  }
}

/**
 * OAuth discovery of a remote MCP server was refused an address: a URL (the challenge's
 * `resource_metadata`, a metadata document's authorization server or endpoint, or where a
 * redirect points) on an origin that is neither the MCP server's nor in `oauth.allowedOrigins`.
 * Nothing was sent there; the server is not connected. `origin` is the refused origin.
 */
export class McpOAuthOriginError extends McpOAuthRefusalError {
  override readonly code = 'TOOLNEXUS_MCP_OAUTH_ORIGIN';

  constructor(
    server: string,
    readonly origin: string,
    how: string,
  ) {
    super(server, `OAuth refused ${how} ${origin}, not the server's origin (allow it with oauth.allowedOrigins)`);
  }
}

/**
 * An authorization server's metadata names an `issuer` other than the one its address was made
 * from (RFC 8414, section 3.3): a server passing off another's metadata. It is not used; the
 * server is not connected. No option allows it.
 */
export class McpOAuthIssuerError extends McpOAuthRefusalError {
  override readonly code = 'TOOLNEXUS_MCP_OAUTH_ISSUER';

  constructor(
    server: string,
    /** The metadata's address, without its query. */
    readonly url: string,
    readonly issuer: string,
  ) {
    super(
      server,
      `the authorization-server metadata at ${url} names issuer ${issuer.slice(0, 200)}, not where it was fetched from; it is not used`,
    );
  }
}

/** What {@link `BoundedOAuthFetch` refuses an OAuth response or address with. */
export type McpOAuthRefusal = McpOAuthResponseTooLargeError | McpOAuthOriginError | McpOAuthIssuerError;

/** True for the OAuth client's own refusals, which keep their class and message in a connect report. */
export function isOAuthRefusal(error: unknown): error is McpOAuthRefusal {
  return error instanceof McpOAuthRefusalError;
}
