import { InvalidArgumentError, ModelResponseError } from '../errors';
import type { ChatModel, ModelRequest, ModelResponse, ToolCall, Usage } from './types';
import { argumentsText, fallbackCallId } from './shared';

/** A tool call as a {@link FunctionModel} may write it: `id` optional, `arguments` as JSON text or an object. */
export interface FunctionToolCall {
  id?: string;
  name: string;
  arguments?: string | Record<string, unknown>;
}

/** What a {@link FunctionModel}'s function returns: plain text (an answer), or text and tool calls. */
export type FunctionModelReply =
  | string
  | {
      text?: string;
      toolCalls?: FunctionToolCall[];
      usage?: Partial<Usage>;
    };

/** The function behind a {@link FunctionModel}. */
export type ModelFunction = (request: ModelRequest) => FunctionModelReply | Promise<FunctionModelReply>;

/**
 * A model that is a function in this process: for tests, scripted demos and custom back
 * ends. It sees exactly what an HTTP model would (system prompt, transcript, tools).
 *
 * @example
 * ```ts
 * const model = new FunctionModel(({ messages }) =>
 *   messages.some((m) => m.role === 'tool') ? 'paid' : { toolCalls: [{ name: 'pay', arguments: { invoice: 7 } }] })
 * ```
 */
export class FunctionModel implements ChatModel {
  readonly provider: string;

  constructor(
    private readonly fn: ModelFunction,
    options: { provider?: string } = {},
  ) {
    if (typeof fn !== 'function') throw new InvalidArgumentError('FunctionModel needs a function');
    this.provider = options.provider ?? 'function';
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const reply = await this.fn(request);
    if (typeof reply === 'string') return { text: reply, toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 } };
    if (typeof reply !== 'object' || reply === null) {
      throw new ModelResponseError(
        this.provider,
        `the function returned ${reply === null ? 'null' : typeof reply}, not a string or { text, toolCalls }`,
      );
    }
    const toolCalls: ToolCall[] = (reply.toolCalls ?? []).map((call, index) => {
      if (typeof call?.name !== 'string' || call.name === '')
        throw new ModelResponseError(this.provider, `tool call #${index} has no name`);
      return { id: call.id ?? fallbackCallId(), name: call.name, arguments: argumentsText(call.arguments) };
    });
    return {
      text: reply.text ?? '',
      toolCalls,
      usage: { ...reply.usage, inputTokens: reply.usage?.inputTokens ?? 0, outputTokens: reply.usage?.outputTokens ?? 0 },
    };
  }
}
