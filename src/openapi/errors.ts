import { ToolnexusError } from '../errors';

/** An OpenAPI document that cannot be made into tools: not JSON or YAML, not OpenAPI 3.x, too large, or its `$ref`s do not resolve. */
export class OpenApiDocumentError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_OPENAPI_DOCUMENT';
}
