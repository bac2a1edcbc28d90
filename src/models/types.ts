import type { ToolContent } from '../results/content';
import type { JsonSchema } from '../results/json-schema';

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
  /**
   * The id the caller gave this message (a chat page's UI message id), kept with the thread so
   * the same message sent again is recognised (docs/chat.md, "Retries and regenerate"). Never
   * sent to a model.
   */
  id?: string;
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
  /**
   * The media the result showed (its images, recordings, files: `withContent`), sent after
   * `content` in the provider's own format, or described in words where the API takes only
   * text in a tool result (docs/agents.md, "Rich results").
   */
  media?: ToolMedia[];
}

/**
 * An image, recording or file a tool result shows the model: base64 `data`, a `url`, or a
 * `ref` into the coordinator's content store (a stored result's media over the bound), which
 * the runner loads before each model call.
 */
export type ToolMedia = Extract<ToolContent, { type: 'image' | 'audio' | 'file' }>;

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
  /**
   * The most output tokens this one call may produce, for a caller that must keep an answer
   * short whatever the model is configured with (an MCP server's sampling request). Each HTTP
   * model sends it as its provider's limit field, never raising a lower limit in its `params`.
   */
  maxOutputTokens?: number;
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
