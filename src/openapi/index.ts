/**
 * `toolnexus-ts/openapi`: HTTP endpoints and OpenAPI documents as tools (docs/openapi.md).
 * `httpTool` needs nothing more; `openApiTools` needs the optional peers
 * `@readme/openapi-parser`, `ajv` and `yaml`.
 */
export { httpTool, DEFAULT_IDEMPOTENCY_HEADER } from './http-tool';
export type { HttpToolSpec, HttpReceiptSource } from './http-tool';
export { openApiTools } from './openapi';
export type { OpenApiOperation, OpenApiToolsOptions } from './openapi';
export { OpenApiDocumentError } from './errors';
export type { EnvSource } from './secrets';
