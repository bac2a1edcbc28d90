import { ToolnexusError } from '../../errors';

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
