/**
 * The Model Context Protocol entry: `import { serveMcp, McpToolSource } from 'toolnexus-ts/mcp'`.
 * A separate entry point, so that users of the core never need the MCP SDK installed: this one
 * needs `@modelcontextprotocol/server` (serveMcp, both eras) and `@modelcontextprotocol/client`
 * (McpToolSource); its public types name no type of the SDK. See docs/mcp.md.
 */
export { serveMcp } from './server/serve';
export type { McpStdioOptions, McpHttpOptions, McpServerHandle, McpHttpServerHandle } from './server/serve';
export type { McpEndpointOptions } from './server/http-endpoint';
export type { McpAuthorize } from './server/http-guard';
export type { McpToolHost, McpServerOptions, McpCallInfo, McpToolContext } from './server/types';
export { McpConfigError, McpConnectionError } from './client/errors';
export { McpToolSource } from './client/source';
export type { McpProtocolVersion, McpToolSourceOptions } from './client/options';
export type { McpConnectReport } from './client/types';
export { parseMcpConfig, readMcpConfig } from './client/config';
export type { McpServerSpec, McpServerEntry, McpEnvironment, McpConfigReading, McpServerOAuth } from './client/config';
export { McpCatalog } from './server/catalog/catalog';
export type {
  McpCatalogOptions,
  ResourceListing,
  ResourceTemplateListing,
  PromptListing,
  CatalogChange,
  Completion,
} from './server/catalog/catalog';
export { Resource } from './server/catalog/resource.decorator';
export { ResourceTemplate } from './server/catalog/resource-template.decorator';
export { Prompt } from './server/catalog/prompt.decorator';
export { McpHeader } from './server/mcp-header.decorator';
export type {
  ResourceOptions,
  ResourceTemplateOptions,
  PromptOptions,
  ResourceBody,
  ResourceContents,
  PromptContent,
  PromptMessage,
  PromptBody,
  CatalogContext,
  Completes,
} from './server/catalog/types';
export { McpCatalogError, McpRequestStateError, McpInputResponseError, McpTaskNotFoundError } from './server/errors';
export type { McpTaskSupport } from './server/tasks';
export type { McpTaskStore, McpTaskRecord, LoadedMcpTask, McpTaskStatus } from '../stores/mcp-tasks';
export type { McpRequestStateProblem } from './server/errors';
export { inputRound } from './server/input-round';
export type { McpInputRound, McpInputRequest } from './server/input-round';
export type { McpSamplingLimits, McpSamplingContent, McpSampleRequest, McpSampleResult, McpSample } from './server/types';
export type { McpServerResource, McpServerPrompt } from './client/types';
export type { McpSamplingOptions, McpSamplingRequestInfo, McpTaskOptions } from './client/types';
export { McpLoginRequiredError, McpLoginError } from './client/errors';
export { MemoryOAuthStore } from './client/oauth/store';
export type { McpOAuthOptions, McpOAuthStore, McpOAuthRecord, McpOAuthValue } from './client/oauth/store';
export type {
  McpOAuthCommonOptions,
  McpOAuthLoginOptions,
  McpOAuthClientCredentialsOptions,
  McpOAuthCrossAppOptions,
  McpOAuthJwtBearerOptions,
  McpDpopOptions,
  McpDpopAlgorithm,
} from './client/oauth/store';
export { McpLoginStateError, McpOAuthIssuerError, McpOAuthOriginError, McpOAuthResponseTooLargeError } from './client/errors';
