import { ToolnexusError } from '../errors';

/** An MCP server configuration (an `mcp.json`) that cannot be used: a wrong shape, a missing variable. */
export class McpConfigError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_CONFIG';
}

/** An MCP server could not be reached, or dropped the connection and could not be reached again. */
export class McpConnectionError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_CONNECTION';
}
