/**
 * The Model Context Protocol entry: `import { serveMcp, McpToolSource } from 'toolnexus-ts/mcp'`.
 * A separate entry point, so that users of the core never need `@modelcontextprotocol/sdk`
 * installed; its public types name no type of the SDK. See docs/mcp.md.
 */
export { serveMcp } from './server/serve';
export type { McpStdioOptions, McpHttpOptions, McpServerHandle, McpHttpServerHandle } from './server/serve';
export type { McpAuthorize } from './server/http-guard';
export type { McpToolHost, McpServerOptions, McpCallInfo, McpToolContext } from './types';
export { McpConfigError, McpConnectionError } from './errors';
export { McpToolSource } from './client/source';
export type { McpToolSourceOptions, McpConnectReport } from './client/source';
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
export { McpCatalogError } from './errors';
export type { McpSamplingLimits, McpSamplingContent, McpSampleRequest, McpSampleResult, McpSample } from './types';
export type { McpServerResource, McpServerPrompt } from './client/source';
export type { McpSamplingOptions, McpSamplingRequestInfo } from './types';
export { McpLoginRequiredError, McpLoginError } from './errors';
export { MemoryOAuthStore } from './client/oauth/store';
export type { McpOAuthOptions, McpOAuthStore, McpOAuthRecord, McpOAuthValue } from './client/oauth/store';
export type { McpOAuthCommonOptions, McpOAuthLoginOptions, McpOAuthClientCredentialsOptions, McpOAuthCrossAppOptions } from './client/oauth/store';
export { McpLoginStateError, McpOAuthResponseTooLargeError } from './errors';
