/**
 * Pins every entry's export list, values and types, so a name reaches users on purpose and
 * never leaks: adding or removing a public name means editing the list below. The entries are
 * package.json's (test/fixtures/entries.ts). The root is the tools layer and stays small; every
 * other name is exported by the one entry of the layer that owns it (CONTRIBUTING.md).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import ts from 'typescript';
import { ENTRIES } from '../fixtures/entries';

const ROOT = join(__dirname, '..', '..');

/** The root's budget: what a tool author reads in one screen. */
const ROOT_MAX_NAMES = 40;
const ROOT_MAX_VALUES = 25;

let program: ts.Program | undefined;

/** The entry's exports as the compiler sees them; type-only names are prefixed `type `. */
function exportsOf(entry: string): string[] {
  program ??= ts.createProgram(
    Object.values(ENTRIES).map((file) => join(ROOT, file)),
    {
      strict: true,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      types: ['node'],
      noEmit: true,
    },
  );
  const checker = program.getTypeChecker();
  const file = ENTRIES[entry];
  const source = file === undefined ? undefined : program.getSourceFile(join(ROOT, file));
  const module = source && checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`no module for ${entry}`);
  return checker
    .getExportsOfModule(module)
    .map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return target.flags & ts.SymbolFlags.Value ? symbol.name : `type ${symbol.name}`;
    })
    .sort();
}

const EXPECTED: Record<string, string[]> = {
  'toolnexus-ts': [
    'Describe',
    'DtoRuleError',
    'InvalidArgumentError',
    'MissingPeerError',
    'REDACTED',
    'SEMCONV_VERSION',
    'Sensitive',
    'Tool',
    'ToolRegistrationError',
    'Toolkit',
    'ToolnexusError',
    'answerFor',
    'authRequired',
    'contentOf',
    'defineTool',
    'failure',
    'isToolResult',
    'pending',
    'pendingOf',
    'sanitizeName',
    'schemaForClass',
    'success',
    'type Answer',
    'type AnswerReason',
    'type ApprovalPolicy',
    'type ClassType',
    'type FunctionTool',
    'type JsonSchema',
    'type PendingRequest',
    'type PendingRequestInit',
    'type TelemetryOptions',
    'type ToolAnnotations',
    'type ToolContent',
    'type ToolContext',
    'type ToolMetricEvent',
    'type ToolOptions',
    'type ToolResult',
    'type ToolkitHooks',
    'type ToolkitOptions',
    'withContent',
  ],
  'toolnexus-ts/suspension': [
    'AlreadyResolvedError',
    'AnswerRefusedError',
    'ClaimHeldError',
    'ClaimLostError',
    'DEFAULT_LEASE_MS',
    'DEFAULT_MAX_CHAIN',
    'DuplicateSuspensionError',
    'InvalidAnswerError',
    'MAX_COMMENT_LENGTH',
    'MemorySuspensionStore',
    'ResumeCoordinator',
    'StoreError',
    'StoreUnavailableError',
    'SuspensionMismatchError',
    'UnknownSuspensionError',
    'UnregisteredToolError',
    'formatRefusal',
    'redactCall',
    'rulesPolicy',
    'type AnswerAction',
    'type AnswerDecision',
    'type AnswerPolicy',
    'type AnswerQuestion',
    'type AnswerRefusal',
    'type AnswerRule',
    'type AnswerWithCall',
    'type AnsweredRequest',
    'type Audit',
    'type AutomaticAnswers',
    'type AutomaticDecision',
    'type AutomaticQuestion',
    'type AutomaticRecord',
    'type CheckedAnswer',
    'type Claim',
    'type Clock',
    'type ClockTimer',
    'type ExecuteOptions',
    'type ExpectedCall',
    'type FormatRefusal',
    'type Grant',
    'type GrantInit',
    'type GrantScope',
    'type GrantStore',
    'type HistoryFilter',
    'type IfClaimed',
    'type MemorySuspensionStoreOptions',
    'type Principal',
    'type Refusal',
    'type RefusalStatus',
    'type ResolveOptions',
    'type ResumeCoordinatorOptions',
    'type SettledStatus',
    'type Settlement',
    'type Signature',
    'type SuspendedCall',
    'type SuspensionFilter',
    'type SuspensionObserver',
    'type SuspensionStatus',
    'type SuspensionStore',
    'type Takeover',
    'type WaitFor',
  ],
  'toolnexus-ts/models': [
    'AnthropicModel',
    'FunctionModel',
    'GeminiModel',
    'ModelConnectionError',
    'ModelError',
    'ModelHttpError',
    'ModelRedirectError',
    'ModelRequestError',
    'ModelResponseError',
    'ModelResponseTooLargeError',
    'ModelTimeoutError',
    'OpenAIChatModel',
    'OpenAIResponsesModel',
    'type AnthropicModelOptions',
    'type AnthropicPromptCache',
    'type AnthropicThinking',
    'type AssistantMessage',
    'type ChatMessage',
    'type ChatModel',
    'type FunctionModelReply',
    'type FunctionToolCall',
    'type GeminiModelOptions',
    'type HttpModelOptions',
    'type ModelFunction',
    'type ModelRequest',
    'type ModelResponse',
    'type ModelStreamEvent',
    'type ModelTool',
    'type OpenAIChatModelOptions',
    'type OpenAIResponsesModelOptions',
    'type OutputFormat',
    'type ProviderItem',
    'type RetryOptions',
    'type ToolCall',
    'type ToolMessage',
    'type Usage',
    'type UserMessage',
  ],
  'toolnexus-ts/agents': [
    'AgentRunner',
    'InvalidResumeError',
    'OutputValidationError',
    'RUN_STATE_FORMAT',
    'RunCheckpointError',
    'RunConflictError',
    'RunNotFoundError',
    'SessionBusyError',
    'SessionFullError',
    'SubAgentInput',
    'SubAgentTool',
    'answerAs',
    'redactRun',
    'roughTokens',
    'summarizeOlder',
    'trimExchanges',
    'trimToTokens',
    'type ActiveRun',
    'type AfterModel',
    'type AgentRunnerOptions',
    'type AgentToolContext',
    'type AnswerAsOptions',
    'type Answered',
    'type AnsweredRun',
    'type BeforeModel',
    'type DoneRunResult',
    'type Durability',
    'type HaltedCall',
    'type HaltedRunResult',
    'type HandoffOptions',
    'type IncompleteRunResult',
    'type ModelCall',
    'type ModelMetricEvent',
    'type OrphanRecovery',
    'type ResumeOptions',
    'type RunCheckpoint',
    'type RunDriver',
    'type RunEvent',
    'type RunListing',
    'type RunOptions',
    'type RunPhase',
    'type RunResult',
    'type RunResultBase',
    'type RunState',
    'type RunStatus',
    'type RunStep',
    'type RunStore',
    'type SessionFilter',
    'type SessionStore',
    'type SessionSummary',
    'type StaleRunFilter',
    'type StepCall',
    'type StoredSession',
    'type SubAgentOrigin',
    'type SubAgentRecord',
    'type SubAgentToolOptions',
    'type SummarizeOptions',
    'type TokenEstimate',
    'type ToolCallRecord',
    'type ToolCallStatus',
    'type TrimOptions',
  ],
  'toolnexus-ts/memory': ['MemoryStore', 'type MemoryStoreOptions'],
  'toolnexus-ts/sqlite': ['SQLITE_SCHEMA_VERSION', 'SqliteStore', 'type SqliteStoreOptions'],
  'toolnexus-ts/postgres': [
    'POSTGRES_STORE_SCHEMA_VERSION',
    'PostgresStore',
    'type PostgresPoolConfig',
    'type PostgresPoolLike',
    'type PostgresStoreCommonOptions',
    'type PostgresStoreConnectionOptions',
    'type PostgresStoreOptions',
    'type PostgresStoreSharedPoolOptions',
  ],
  'toolnexus-ts/webhooks': [
    'DEFAULT_WEBHOOK_TOLERANCE_SECONDS',
    'WEBHOOK_DELIVERY_HEADER',
    'WEBHOOK_EVENT_HEADER',
    'WEBHOOK_SIGNATURE_HEADER',
    'WEBHOOK_TIMESTAMP_HEADER',
    'Webhooks',
    'signWebhook',
    'type WebhookDelivery',
    'type WebhookEvent',
    'type WebhookFailure',
    'type WebhookPayload',
    'type WebhookSuspension',
    'type WebhookVerification',
    'type WebhooksOptions',
    'verifyWebhook',
  ],
  'toolnexus-ts/inbox': [
    'AnsweredByOtherError',
    'BearerTokens',
    'CSRF_COOKIE',
    'CSRF_FIELD',
    'CSRF_HEADER',
    'InboxBadRequestError',
    'InboxBodyTooLargeError',
    'InboxCsrfError',
    'InboxError',
    'InboxForbiddenError',
    'InboxInvalidInputError',
    'InboxUnauthorizedError',
    'LOCAL_PRINCIPAL',
    'MemorySignInStore',
    'SESSION_COOKIE',
    'SuspensionExpiredError',
    'bearerToken',
    'bearerTokens',
    'createInbox',
    'type AnswerOutcome',
    'type Authorize',
    'type BearerTokenEntry',
    'type FieldProblem',
    'type Inbox',
    'type InboxLogEntry',
    'type InboxLogger',
    'type InboxOptions',
    'type InboxQuery',
    'type InboxSignIn',
    'type InboxSignInOptions',
    'type InboxSignInStore',
    'type InboxStatusFilter',
    'type InputField',
    'type SuspensionView',
  ],
  'toolnexus-ts/chat': [
    'ChatRequestError',
    'UIPartWriter',
    'UI_STREAM_HEADERS',
    'chatFastifyHandler',
    'chatHandler',
    'chatResponse',
    'chatStream',
    'chatThread',
    'chatThreadHandler',
    'chatThreadResponse',
    'messageIdOf',
    'sseOf',
    'toUIMessageStream',
    'type ChatFastifyOptions',
    'type ChatHandlerOptions',
    'type ChatLogger',
    'type ChatOptions',
    'type ChatRequestData',
    'type ChatResponseOptions',
    'type ChatSubAgentData',
    'type ChatToolUIPart',
    'type ChatUIMessage',
    'type ChatUIPart',
    'type FastifyLikeReply',
    'type FastifyLikeRequest',
    'type UIStreamOptions',
    'type UIStreamPart',
    'uiPartBatches',
  ],
  'toolnexus-ts/mcp': [
    'McpCatalog',
    'McpCatalogError',
    'McpConfigError',
    'McpConnectionError',
    'McpLoginError',
    'McpLoginRequiredError',
    'McpLoginStateError',
    'McpOAuthIssuerError',
    'McpOAuthOriginError',
    'McpOAuthResponseTooLargeError',
    'McpToolSource',
    'MemoryOAuthStore',
    'Prompt',
    'Resource',
    'ResourceTemplate',
    'parseMcpConfig',
    'readMcpConfig',
    'serveMcp',
    'type CatalogChange',
    'type CatalogContext',
    'type Completes',
    'type Completion',
    'type McpAuthorize',
    'type McpCallInfo',
    'type McpCatalogOptions',
    'type McpConfigReading',
    'type McpConnectReport',
    'type McpEnvironment',
    'type McpHttpOptions',
    'type McpHttpServerHandle',
    'type McpOAuthClientCredentialsOptions',
    'type McpOAuthCommonOptions',
    'type McpOAuthCrossAppOptions',
    'type McpOAuthLoginOptions',
    'type McpOAuthOptions',
    'type McpOAuthRecord',
    'type McpOAuthStore',
    'type McpOAuthValue',
    'type McpSample',
    'type McpSampleRequest',
    'type McpSampleResult',
    'type McpSamplingContent',
    'type McpSamplingLimits',
    'type McpSamplingOptions',
    'type McpSamplingRequestInfo',
    'type McpServerEntry',
    'type McpServerHandle',
    'type McpServerOAuth',
    'type McpServerOptions',
    'type McpServerPrompt',
    'type McpServerResource',
    'type McpServerSpec',
    'type McpStdioOptions',
    'type McpToolContext',
    'type McpToolHost',
    'type McpToolSourceOptions',
    'type PromptBody',
    'type PromptContent',
    'type PromptListing',
    'type PromptMessage',
    'type PromptOptions',
    'type ResourceBody',
    'type ResourceContents',
    'type ResourceListing',
    'type ResourceOptions',
    'type ResourceTemplateListing',
    'type ResourceTemplateOptions',
  ],
  'toolnexus-ts/nest': [
    'TOOLNEXUS_OPTIONS',
    'ToolnexusChatModule',
    'ToolnexusExceptionFilter',
    'ToolnexusInboxModule',
    'ToolnexusModule',
    'ToolnexusModuleError',
    'httpStatusOf',
    'type NestToolContext',
    'type ToolnexusChatModuleOptions',
    'type ToolnexusErrorBody',
    'type ToolnexusInboxModuleOptions',
    'type ToolnexusModuleAsyncOptions',
    'type ToolnexusModuleOptions',
    'type ToolnexusModuleRootOptions',
    'type ToolnexusOptionsFactory',
  ],
  'toolnexus-ts/testing': [
    'runRunStoreConformance',
    'runStoreConformance',
    'runSuspensionStoreConformance',
    'sampleCall',
    'type ClosableRunStore',
  ],
  'toolnexus-ts/ai-sdk': [
    'AI_SDK_CONTENT_ITEM',
    'AI_SDK_RUN_PREFIX',
    'AiSdkModel',
    'aiSdkToolApproval',
    'aiSdkTools',
    'recordDeclines',
    'type AiSdkApprovalFunction',
    'type AiSdkLanguageModel',
    'type AiSdkModelOptions',
    'type AiSdkTool',
    'type AiSdkToolApproval',
    'type AiSdkToolOutput',
    'type AiSdkToolsOptions',
    'type SuspendedToolOutput',
    'withOutcomes',
  ],
  'toolnexus-ts/openai-agents': ['openAIAgentsTools', 'recordRejection', 'type OpenAIAgentsTool', 'type OpenAIAgentsToolsOptions'],
  'toolnexus-ts/langchain': [
    'LANGCHAIN_RUN_PREFIX',
    'langchainTools',
    'type LangChainInterruptValue',
    'type LangChainTool',
    'type LangChainToolsOptions',
  ],
};

/**
 * Entries whose peer is ESM-only (`ai`): jest on Node 20 cannot load it, node can, so their
 * run-time export list is read in a child process (test/fixtures/register-ts.js).
 */
const LOADED_IN_CHILD: ReadonlySet<string> = new Set(['toolnexus-ts/ai-sdk']);

function valuesInChild(entry: string): string[] {
  const script = `process.stdout.write(JSON.stringify(Object.keys(require(${JSON.stringify(join(ROOT, ENTRIES[entry] ?? ''))}))))`;
  const out = execFileSync(process.execPath, ['-r', join(ROOT, 'test', 'fixtures', 'register-ts.js'), '-e', script], { encoding: 'utf8' });
  return JSON.parse(out) as string[];
}

const values = (names: string[]) => names.filter((name) => !name.startsWith('type '));

describe('export lists', () => {
  it('pins every entry of package.json, and only those', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(ENTRIES).sort());
  });

  it.each(Object.keys(ENTRIES))('%s exports exactly the pinned names', (entry) => {
    expect(exportsOf(entry)).toEqual(EXPECTED[entry]);
  });

  it.each(Object.keys(ENTRIES))('%s at run time holds exactly the pinned values', async (entry) => {
    const names = LOADED_IN_CHILD.has(entry) ? valuesInChild(entry) : Object.keys((await import(entry)) as Record<string, unknown>);
    expect(names.filter((name) => name !== 'default' && name !== '__esModule').sort()).toEqual(values(EXPECTED[entry] ?? []));
  });

  it(`keeps the root small: at most ${ROOT_MAX_NAMES} names, at most ${ROOT_MAX_VALUES} of them values`, () => {
    const root = exportsOf('toolnexus-ts');
    expect(root.length).toBeLessThanOrEqual(ROOT_MAX_NAMES);
    expect(values(root).length).toBeLessThanOrEqual(ROOT_MAX_VALUES);
  });

  it("exports each name from one entry only: no entry re-exports another entry's names", () => {
    const owners = new Map<string, string[]>();
    for (const entry of Object.keys(ENTRIES)) {
      for (const name of exportsOf(entry))
        owners.set(name.replace(/^type /, ''), [...(owners.get(name.replace(/^type /, '')) ?? []), entry]);
    }
    expect([...owners].filter(([, entries]) => entries.length > 1)).toEqual([]);
  });

  it('leaves internals out of the root', async () => {
    const root = (await import('toolnexus-ts')) as Record<string, unknown>;
    for (const internal of [
      'toolOptionsOf',
      'newPendingId',
      'isSettled',
      'isSuspensionStatus',
      'SUSPENSION_STATUSES',
      'descriptionOf',
      'describedPropertiesOf',
    ]) {
      expect(root[internal]).toBeUndefined();
    }
  });
});
