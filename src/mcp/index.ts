/**
 * The Model Context Protocol entry: `import { serveMcp, McpToolSource } from 'toolnexus-ts/mcp'`.
 * A separate entry point, so that users of the core never need `@modelcontextprotocol/sdk`
 * installed; its public types name no type of the SDK. See docs/mcp.md.
 */
export { serveMcp } from './serve';
export type { McpStdioOptions, McpHttpOptions, McpServerHandle, McpHttpServerHandle } from './serve';
export type { McpAuthorize } from './http-guard';
export type { McpToolHost, McpServerOptions, McpCallInfo, McpToolContext } from './types';
export { McpConfigError, McpConnectionError } from './errors';
export { McpToolSource } from './source';
export type { McpToolSourceOptions, McpConnectReport } from './source';
export { parseMcpConfig, readMcpConfig } from './config';
export type { McpServerSpec, McpServerEntry, McpEnvironment, McpConfigReading, McpServerOAuth } from './config';
export { McpCatalog } from './catalog/catalog';
export type {
  McpCatalogOptions,
  ResourceListing,
  ResourceTemplateListing,
  PromptListing,
  CatalogChange,
  Completion,
} from './catalog/catalog';
export { Resource } from './catalog/resource.decorator';
export { ResourceTemplate } from './catalog/resource-template.decorator';
export { Prompt } from './catalog/prompt.decorator';
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
} from './catalog/types';
export { McpCatalogError } from './errors';
export type { McpSamplingLimits, McpSamplingContent, McpSampleRequest, McpSampleResult, McpSample } from './types';
export type { McpServerResource, McpServerPrompt } from './source';
export type { McpSamplingOptions, McpSamplingRequestInfo } from './types';
export { McpLoginRequiredError, McpLoginError } from './errors';
export { MemoryOAuthStore } from './oauth-store';
export type { McpOAuthOptions, McpOAuthStore, McpOAuthRecord, McpOAuthValue } from './oauth-store';
export type { McpOAuthCommonOptions, McpOAuthLoginOptions, McpOAuthClientCredentialsOptions, McpOAuthCrossAppOptions } from './oauth-store';
export { McpLoginStateError, McpOAuthResponseTooLargeError } from './errors';
