import { ToolnexusError } from '../errors';

/** An MCP server configuration (an `mcp.json`) that cannot be used: a wrong shape, a missing variable. */
export class McpConfigError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_CONFIG';
}

/** An MCP server could not be reached, or dropped the connection and could not be reached again. */
export class McpConnectionError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_CONNECTION';
}

/**
 * A catalog request that cannot be served: no resource at that URI, no such prompt, arguments
 * or template parameters that do not validate. `reason` says which, for the protocol's error code.
 */
export class McpCatalogError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_CATALOG';

  constructor(
    message: string,
    readonly reason: 'not-found' | 'invalid',
  ) {
    super(message);
  }
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
  override readonly code = 'TOOLNEXUS_MCP_LOGIN';
}
