import type { PendingRequest, ToolResult } from '../results/wire';
import type { JsonSchema } from '../schema/json-schema';

/**
 * One tool call a model asked for. `arguments` is the JSON text exactly as the model sent
 * it, so a malformed payload is kept (and answered with an error result) rather than lost.
 */
export interface ToolCall {
  /** The provider's tool-call id (`call_...`, `toolu_...`): stable across suspend and resume. */
  id: string;
  name: string;
  arguments: string;
}

/** The user's turn. */
export interface UserMessage {
  role: 'user';
  content: string;
}

/**
 * Something a provider sent in the model's turn that it needs back, verbatim, on the next
 * request: an OpenAI Responses `reasoning` item (with its encrypted content), an Anthropic
 * signed `thinking` or `redacted_thinking` block. `provider` names the model that made it
 * (its `ChatModel.provider`), so another provider's model leaves it out; `data` is the
 * provider's own JSON, untouched, so a checkpoint carries it to another process.
 */
export interface ProviderItem {
  provider: string;
  /** The provider's item or block type (`reasoning`, `thinking`, `redacted_thinking`, ...). */
  type: string;
  data: Record<string, unknown>;
}

/** The model's turn: its text and the tool calls it asked for, in the order it asked. */
export interface AssistantMessage {
  role: 'assistant';
  content: string;
  toolCalls?: ToolCall[];
  /** Provider items to send back on the next request, in the order the provider sent them. */
  items?: ProviderItem[];
}

/** The result of one tool call, fed back to the model in the provider's tool-result shape. */
export interface ToolMessage {
  role: 'tool';
  callId: string;
  name: string;
  content: string;
  isError: boolean;
}

/**
 * A provider-neutral transcript entry. Each model translates the transcript into its own
 * wire shape (OpenAI `tool` messages, Anthropic `tool_result` blocks), so a checkpoint is
 * plain JSON that any process can continue.
 */
export type ChatMessage = UserMessage | AssistantMessage | ToolMessage;

/** Token counts as the provider reported them (0 when it reported none). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from the provider's prompt cache (part of `inputTokens`), when reported. */
  cachedInputTokens?: number;
  /** Output tokens spent on reasoning or thinking (part of `outputTokens`), when reported. */
  reasoningTokens?: number;
  /** Input tokens written to the provider's prompt cache (part of `inputTokens`), when reported (Anthropic). */
  cacheWriteInputTokens?: number;
}

/** What a model needs to know about one tool. A `RegisteredTool` is one. */
export interface ModelTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

/** One model call. */
export interface ModelRequest {
  system?: string;
  messages: readonly ChatMessage[];
  /**
   * The tools on offer. The runner passes the same array instance for as long as the
   * toolkit is unchanged, so a model may cache its provider-shaped copy by identity.
   */
  tools: readonly ModelTool[];
  signal?: AbortSignal;
  /**
   * Asks for the final answer as JSON matching `schema`, through the provider's native
   * structured output. The runner sets it only for a model whose `structuredOutput` is true;
   * other models get a final-answer tool among `tools` instead.
   */
  output?: OutputFormat;
}

/** A typed final answer as a model request asks for it: a name (`[a-zA-Z0-9_-]`, at most 64) and the JSON Schema. */
export interface OutputFormat {
  name: string;
  schema: JsonSchema;
}

/** What one model call produced. */
export interface ModelResponse {
  text: string;
  /** In the order the model asked for them; empty when the model answered. */
  toolCalls: ToolCall[];
  usage: Usage;
  /** The provider's own reason (`stop`, `tool_calls`, `end_turn`, `tool_use`, ...), when it gave one. */
  stopReason?: string;
  /** Provider items of this turn that the next request must carry back (see {@link ProviderItem}). */
  items?: ProviderItem[];
  /** The model that answered, as the provider named it (traces record it as `gen_ai.response.model`). */
  model?: string;
}

/** What a streaming model call yields: text as it arrives, then exactly one `response`. */
export type ModelStreamEvent =
  | { type: 'text'; delta: string }
  /** Reasoning or thinking text as it arrives, when the provider shows it. */
  | { type: 'reasoning'; delta: string }
  | { type: 'response'; response: ModelResponse };

/**
 * A chat model the runner can drive. Implement `complete`; add `stream` when the back end
 * can send text as it is produced (the runner falls back to `complete` otherwise).
 */
export interface ChatModel {
  /** Names the provider in errors and logs. */
  readonly provider: string;
  /** The model asked for (`gpt-4.1`, `claude-sonnet-4-5`...), when the model knows it: traces name it. */
  readonly model?: string;
  /**
   * True when the model honours {@link ModelRequest.output} natively (OpenAI chat
   * `response_format: json_schema`...): the runner then asks for a typed answer that way,
   * and otherwise through a final-answer tool.
   */
  readonly structuredOutput?: boolean;
  complete(request: ModelRequest): Promise<ModelResponse>;
  stream?(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
}

/**
 * What became of one tool call, apart from the wire result (docs/agents.md, "Tool calls"):
 * `ok` ran and succeeded; `error` failed (unknown tool, bad arguments, a throw, a timeout);
 * `pending` is suspended, waiting for its answer (its result is the contract's `pending()`
 * shape, `isError: true`, yet it is no error); `declined`, `expired`, `cancelled` were
 * suspended and refused so (the tool did not run). A closed set: a dashboard counts errors
 * as `status === 'error'`.
 */
export type ToolCallStatus = 'ok' | 'error' | 'pending' | 'declined' | 'expired' | 'cancelled';

/** One tool call of a run with the result that was fed back for it. */
export interface ToolCallRecord {
  id: string;
  name: string;
  arguments: string;
  /** The result fed back to the model, as the wire carries it. */
  result: ToolResult;
  /** What became of the call; read this, not `result.isError`, to count errors. */
  status: ToolCallStatus;
  /** The turn (1-based model call) that asked for it. */
  turn: number;
}

/**
 * How a run ended: `done`, `halted` (a suspension waits for its answer; the run is
 * checkpointed) or `incomplete` (a limit stopped it). Before 0.2 a halted run said
 * `'pending'`, the word of a suspension's own status; see {@link PendingRunResult}.
 */
export type RunStatus = 'done' | 'halted' | 'incomplete';

/** What every outcome of `run` and `resume` carries. */
export interface RunResultBase {
  /** Token counts summed over every model call of the run, including those before a halt. */
  usage: Usage;
  /** Token counts of each model call, in order (`turnUsage[i]` is turn `i + 1`). */
  turnUsage: Usage[];
  /** The model's last text (its answer when `done`). */
  text: string;
  /** The whole transcript, without the system prompt. */
  messages: ChatMessage[];
  /** Every tool call so far, in the order asked; a call still suspended carries its pending result. */
  toolCalls: ToolCallRecord[];
  /** Model calls made so far. */
  turns: number;
  runId: string;
}

/**
 * The model answered without tool calls. With a typed answer asked for (`output` of
 * `run`), `output` is the validated DTO instance; otherwise it is `undefined`.
 */
export interface DoneRunResult<TOutput = unknown> extends RunResultBase {
  status: 'done';
  output: TOutput;
  pending?: undefined;
  pendings?: undefined;
  limit?: undefined;
}

/** A tool suspended and the run is checkpointed until `resume`: the run is halted. */
export interface HaltedRunResult extends RunResultBase {
  status: 'halted';
  /** The first open suspension in call order. */
  pending: PendingRequest;
  /** Every open suspension in call order. */
  pendings: PendingRequest[];
  limit?: undefined;
  output?: undefined;
}

/** A limit stopped the run. */
export interface IncompleteRunResult extends RunResultBase {
  status: 'incomplete';
  limit: 'maxTurns';
  pending?: undefined;
  pendings?: undefined;
  output?: undefined;
}

/** The outcome of `run` and `resume`, told apart by `status`; `TOutput` is the typed answer's class instance. */
export type RunResult<TOutput = unknown> = DoneRunResult<TOutput> | HaltedRunResult | IncompleteRunResult;

/**
 * @deprecated Since 0.2: {@link HaltedRunResult}. A halted run's `status` is `'halted'`;
 * code that compared it with `'pending'` no longer compiles, on purpose (the comparison would
 * always be false). Kept one release as this alias.
 */
export type PendingRunResult = HaltedRunResult;

/** One model call of a run, as `AgentRunnerOptions.onMetric` sees it. */
export interface ModelMetricEvent {
  event: 'model';
  /** The model's `provider`. */
  provider: string;
  runId: string;
  /** The turn (1-based model call of the run) this call made. */
  turn: number;
  usage: Usage;
  /** Wall time of the call, from the request to the whole answer. */
  ms: number;
  /** Whether the answer was streamed. */
  streamed: boolean;
}

/**
 * What `stream` yields. An event of a sub-agent (a runner registered with `asTool`) carries
 * `path`: the sub-agent tools from this run down to the agent it happened in (`['research']`,
 * `['research', 'search']`); the run's own events have none.
 */
export type RunEvent = RunEventBody & { path?: string[] };

/** The events of {@link RunEvent}, without their `path`. */
export type RunEventBody =
  | { type: 'text'; delta: string }
  /** The model's thinking or reasoning text as it arrives, when the provider shows it (never fed back as text). */
  | { type: 'reasoning'; delta: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'tool_result'; callId: string; name: string; result: ToolResult }
  | { type: 'pending'; callId: string; request: PendingRequest }
  | { type: 'done'; result: RunResult };
