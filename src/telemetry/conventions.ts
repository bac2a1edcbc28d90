/**
 * Every span name, attribute name and metric name this library emits, in one place.
 *
 * Followed: the OpenTelemetry semantic conventions for generative AI (gen-ai spans, agent
 * spans, metrics) and for MCP, version {@link SEMCONV_VERSION}. Both are at status
 * "Development": when they change, this file is the one to change. Names under `toolnexus.`
 * are this library's own, for what no convention covers (the human wait).
 */

/** The semantic-conventions release these names follow. */
export const SEMCONV_VERSION = '1.37.0';

/** The instrumentation scope every tracer and meter is asked for. */
export const INSTRUMENTATION_SCOPE = 'toolnexus-ts';

/** Operation names (`gen_ai.operation.name`), which also start the span names. */
export const OPERATION = {
  invokeAgent: 'invoke_agent',
  chat: 'chat',
  executeTool: 'execute_tool',
} as const;

/** Span names: the operation, then (after a space) what it acts on. */
export const SPAN = {
  /** `invoke_agent {agent}`: one run, or one resume of a run. */
  invokeAgent: (agent: string): string => `${OPERATION.invokeAgent} ${agent}`,
  /** `chat {model}`: one model call. */
  chat: (model: string): string => `${OPERATION.chat} ${model}`,
  /** `execute_tool {tool}`: one call of a tool (a replay included). */
  executeTool: (tool: string): string => `${OPERATION.executeTool} ${tool}`,
  /** `resolve_suspension {tool}`: an answer given to a suspension, its replay inside. Our own. */
  resolve: (tool: string): string => `resolve_suspension ${tool}`,
  /** `evaluation {name}`: the zero-length span carrying an evaluation event under the span it evaluates. Our own. */
  evaluation: (name: string): string => `evaluation ${name}`,
  /** `tools/call {tool}`: the MCP request, CLIENT in McpToolSource, SERVER in serveMcp. */
  mcpToolsCall: (tool: string): string => `tools/call ${tool}`,
} as const;

/** Attribute names. */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  tokenType: 'gen_ai.token.type',
  errorType: 'error.type',
  httpStatus: 'http.response.status_code',
  mcpMethod: 'mcp.method.name',
  mcpSession: 'mcp.session.id',
  mcpProtocolVersion: 'mcp.protocol.version',
  jsonrpcRequestId: 'jsonrpc.request.id',
  /** Our own: how the run or resume ended (`done`, `pending`, `incomplete`, `blocked`, `budget_exceeded`, `cancelled`). */
  runStatus: 'toolnexus.run.status',
  /** Our own: the limit a `budget_exceeded` run passed (`totalTokens`, `costUsd`...), its value and what was spent. */
  budgetLimit: 'toolnexus.budget.limit',
  budgetValue: 'toolnexus.budget.value',
  budgetSpent: 'toolnexus.budget.spent',
  /** Our own: `run` or `session`, whose budget a `budget_exceeded` run passed. */
  budgetScope: 'toolnexus.budget.scope',
  /** Our own: the guardrail that blocked a `blocked` run, and at which stage. */
  guardrailName: 'toolnexus.guardrail.name',
  guardrailStage: 'toolnexus.guardrail.stage',
  /** Our own: what a guardrail's check said (`allow`, `block`, `feedback`), on its `guardrail` span event. */
  guardrailAction: 'toolnexus.guardrail.action',
  /** Our own: the suspension a call made or a resolution answered. */
  requestId: 'toolnexus.request.id',
  requestKind: 'toolnexus.request.kind',
  /** Our own: how a call ended (`ok`, `error`, `pending`). */
  toolOutcome: 'toolnexus.tool.outcome',
  /** Our own: a suspension's status (`pending`, `resolved`, `declined`, `expired`, `cancelled`). */
  suspensionStatus: 'toolnexus.suspension.status',
  /** Our own: who answered (a principal's id); recorded only when the host opts in. */
  answeredBy: 'toolnexus.answered_by',
  /** The evaluation event's name, label and explanation (`gen_ai.evaluation.result`). */
  evaluationName: 'gen_ai.evaluation.name',
  evaluationLabel: 'gen_ai.evaluation.score.label',
  evaluationExplanation: 'gen_ai.evaluation.explanation',
  /** Our own: the retry number of a model call's HTTP retry event. */
  retryAttempt: 'toolnexus.retry.attempt',
} as const;

/** Span event names. */
export const EVENT = {
  /** A model call's HTTP attempt failed and is retried. */
  retry: 'toolnexus.http.retry',
} as const;

/** The GenAI evaluation event, and the name of the one this library records: a person's answer to an approval. */
export const EVALUATION = {
  event: 'gen_ai.evaluation.result',
  humanApproval: 'human_approval',
} as const;

/** Metric names, units and low-cardinality values. */
export const METRIC = {
  operationDuration: 'gen_ai.client.operation.duration',
  tokenUsage: 'gen_ai.client.token.usage',
  /** Our own: tool calls, by tool and outcome. */
  toolCalls: 'toolnexus.tool.calls',
  /** Our own: suspensions recorded (`pending`) and settled, by status, tool and request kind. */
  suspensions: 'toolnexus.suspensions',
} as const;

/** The bucket boundaries the conventions advise for the two gen_ai histograms. */
export const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
export const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

/** Where MCP carries trace context in a request: `params._meta.traceparent` / `tracestate`. */
export const MCP_META = { traceparent: 'traceparent', tracestate: 'tracestate' } as const;
