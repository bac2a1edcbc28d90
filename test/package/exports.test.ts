/**
 * Pins every entry's export list, values and types, so a name reaches users on purpose and
 * never leaks: adding or removing a public name means editing the list below.
 */
import { join } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');
const ENTRIES = {
  'toolnexus-ts': 'src/index.ts',
  'toolnexus-ts/sqlite': 'src/sqlite/index.ts',
  'toolnexus-ts/postgres': 'src/postgres/index.ts',
  'toolnexus-ts/nest': 'src/nest/index.ts',
  'toolnexus-ts/testing': 'src/testing/index.ts',
  'toolnexus-ts/inbox': 'src/inbox/index.ts',
} as const;
type Entry = keyof typeof ENTRIES;

let program: ts.Program | undefined;

/** The entry's exports as the compiler sees them; type-only names are prefixed `type `. */
function exportsOf(entry: Entry): string[] {
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
  const source = program.getSourceFile(join(ROOT, ENTRIES[entry]));
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

const EXPECTED: Record<Entry, string[]> = {
  'toolnexus-ts': [
    'AgentRunner',
    'AlreadyResolvedError',
    'AnthropicModel',
    'ClaimLostError',
    'DEFAULT_LEASE_MS',
    'DEFAULT_MAX_CHAIN',
    'Describe',
    'DuplicateSuspensionError',
    'FunctionModel',
    'InvalidAnswerError',
    'InvalidArgumentError',
    'InvalidResumeError',
    'MAX_COMMENT_LENGTH',
    'MemoryPendingStore',
    'ModelConnectionError',
    'ModelError',
    'ModelHttpError',
    'ModelRedirectError',
    'ModelRequestError',
    'ModelResponseError',
    'ModelResponseTooLargeError',
    'ModelTimeoutError',
    'OpenAIChatModel',
    'POSTGRES_STORE_SCHEMA_VERSION',
    'PendingStoreError',
    'PostgresPendingStore',
    'REDACTED',
    'RUN_STATE_FORMAT',
    'ResumeCoordinator',
    'RunCheckpointError',
    'RunConflictError',
    'RunNotFoundError',
    'SQLITE_SCHEMA_VERSION',
    'Sensitive',
    'SqlitePendingStore',
    'StoreUnavailableError',
    'SuspensionMismatchError',
    'Tool',
    'ToolRegistrationError',
    'Toolkit',
    'ToolnexusError',
    'UnknownSuspensionError',
    'UnregisteredToolError',
    'WEBHOOK_DELIVERY_HEADER',
    'WEBHOOK_EVENT_HEADER',
    'WEBHOOK_SIGNATURE_HEADER',
    'WEBHOOK_TIMESTAMP_HEADER',
    'Webhooks',
    'answerFor',
    'authRequired',
    'defaultToolName',
    'defineTool',
    'failure',
    'formatRefusal',
    'isFunctionTool',
    'isToolResult',
    'pending',
    'pendingOf',
    'redactCall',
    'sanitizeName',
    'schemaForClass',
    'signWebhook',
    'success',
    'toResult',
    'type AfterToolEvent',
    'type AgentRunnerOptions',
    'type AgentToolContext',
    'type Answer',
    'type AnswerReason',
    'type AnsweredRequest',
    'type AnthropicModelOptions',
    'type AnthropicTool',
    'type AnyClass',
    'type ApprovalPolicy',
    'type AssistantMessage',
    'type BeforeToolEvent',
    'type ChatMessage',
    'type ChatModel',
    'type Claim',
    'type ClassType',
    'type DoneRunResult',
    'type DtoFunctionToolSpec',
    'type ExecuteOptions',
    'type FormatRefusal',
    'type FunctionModelReply',
    'type FunctionTool',
    'type FunctionToolCall',
    'type GeminiTools',
    'type HaltedCall',
    'type HistoryFilter',
    'type HttpModelOptions',
    'type IncompleteRunResult',
    'type JsonSchema',
    'type ModelFunction',
    'type ModelRequest',
    'type ModelResponse',
    'type ModelStreamEvent',
    'type ModelTool',
    'type OpenAIChatModelOptions',
    'type OpenAITool',
    'type PendingRequest',
    'type PendingRequestInit',
    'type PendingRunResult',
    'type PendingStore',
    'type PostgresPendingStoreOptions',
    'type PostgresPoolConfig',
    'type PostgresPoolLike',
    'type PostgresStoreCommonOptions',
    'type PostgresStoreConnectionOptions',
    'type PostgresStoreSharedPoolOptions',
    'type Principal',
    'type ProviderItem',
    'type Refusal',
    'type RefusalStatus',
    'type RegisteredTool',
    'type Registrable',
    'type ReplayInfo',
    'type ResolveOptions',
    'type ResumeCoordinatorOptions',
    'type ResumeOptions',
    'type RetryOptions',
    'type RunCheckpoint',
    'type RunDriver',
    'type RunEvent',
    'type RunOptions',
    'type RunPhase',
    'type RunResult',
    'type RunResultBase',
    'type RunState',
    'type RunStatus',
    'type RunStore',
    'type SchemaFunctionToolSpec',
    'type SettledStatus',
    'type Settlement',
    'type SqlitePendingStoreOptions',
    'type SuspendedCall',
    'type SuspensionFilter',
    'type SuspensionObserver',
    'type SuspensionStatus',
    'type ToolCall',
    'type ToolCallRecord',
    'type ToolContext',
    'type ToolMessage',
    'type ToolMetricEvent',
    'type ToolOptions',
    'type ToolResolver',
    'type ToolResult',
    'type ToolkitHooks',
    'type ToolkitOptions',
    'type Usage',
    'type UserMessage',
    'type WaitFor',
    'type WebhookDelivery',
    'type WebhookEvent',
    'type WebhookFailure',
    'type WebhookPayload',
    'type WebhookSuspension',
    'type WebhookVerification',
    'type WebhooksOptions',
    'verifyWebhook',
  ],
  'toolnexus-ts/sqlite': ['SQLITE_SCHEMA_VERSION', 'SqlitePendingStore', 'type SqlitePendingStoreOptions'],
  'toolnexus-ts/postgres': [
    'POSTGRES_STORE_SCHEMA_VERSION',
    'PostgresPendingStore',
    'type PostgresPendingStoreOptions',
    'type PostgresPoolConfig',
    'type PostgresPoolLike',
    'type PostgresStoreCommonOptions',
    'type PostgresStoreConnectionOptions',
    'type PostgresStoreSharedPoolOptions',
  ],
  'toolnexus-ts/nest': [
    'TOOLNEXUS_OPTIONS',
    'ToolnexusExceptionFilter',
    'ToolnexusInboxModule',
    'ToolnexusModule',
    'ToolnexusModuleError',
    'httpStatusOf',
    'type NestToolContext',
    'type ToolnexusErrorBody',
    'type ToolnexusInboxModuleOptions',
    'type ToolnexusModuleAsyncOptions',
    'type ToolnexusModuleOptions',
    'type ToolnexusModuleRootOptions',
    'type ToolnexusOptionsFactory',
  ],
  'toolnexus-ts/testing': ['runStoreConformance', 'sampleCall'],
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
    'type InboxAction',
    'type InboxAllow',
    'type InboxLogEntry',
    'type InboxOptions',
    'type InboxQuery',
    'type InboxRule',
    'type InboxStatusFilter',
    'type InputField',
    'type SuspensionView',
  ],
};

describe('export lists', () => {
  it.each(Object.keys(ENTRIES) as Entry[])('%s exports exactly the pinned names', (entry) => {
    expect(exportsOf(entry)).toEqual(EXPECTED[entry]);
  });

  it.each(Object.keys(ENTRIES) as Entry[])('%s at run time holds exactly the pinned values', async (entry) => {
    const loaded = (await import(entry)) as Record<string, unknown>;
    const values = EXPECTED[entry].filter((name) => !name.startsWith('type '));
    expect(
      Object.keys(loaded)
        .filter((name) => name !== 'default' && name !== '__esModule')
        .sort(),
    ).toEqual(values);
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
