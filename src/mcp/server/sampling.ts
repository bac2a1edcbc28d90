import type { Server, ServerContext } from '@modelcontextprotocol/server';
import { InvalidArgumentError } from '../../errors';
import type { McpSample, McpSampleRequest, McpSampleResult, McpSamplingLimits } from './types';

const DEFAULTS: Required<McpSamplingLimits> = { maxTokens: 4096, maxMessages: 100, maxRequestBytes: 1024 * 1024, timeoutMs: 120_000 };
/** Longest text kept from the client's answer: the client is as much an outsider as the model behind it. */
const MAX_ANSWER_CHARS = 1_000_000;

/**
 * `ctx.sample` for one call: the request checked against the limits before it leaves, sent as
 * `sampling/createMessage` tied to the call (so the client can show which tool asks), and the
 * answer checked for its shape and bounded. The call's signal cancels it.
 */
export function samplerFor(server: Server, extra: ServerContext, options: McpSamplingLimits = {}): McpSample {
  const limits = { ...DEFAULTS, ...options };
  return async (request: McpSampleRequest): Promise<McpSampleResult> => {
    check(request, limits);
    const answer = await server.createMessage(
      {
        messages: request.messages,
        maxTokens: request.maxTokens,
        ...(request.systemPrompt !== undefined ? { systemPrompt: request.systemPrompt } : {}),
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(request.stopSequences !== undefined ? { stopSequences: request.stopSequences } : {}),
        ...(request.modelPreferences !== undefined ? { modelPreferences: request.modelPreferences } : {}),
      },
      { signal: extra.mcpReq.signal, timeout: limits.timeoutMs, relatedRequestId: extra.mcpReq.id },
    );
    const content = answer.content as { type?: unknown; text?: unknown; data?: unknown; mimeType?: unknown };
    const result: McpSampleResult = { role: answer.role, model: String(answer.model), content: { type: 'text', text: '' } };
    if (content.type === 'text' && typeof content.text === 'string')
      result.content = { type: 'text', text: content.text.slice(0, MAX_ANSWER_CHARS) };
    else if (
      (content.type === 'image' || content.type === 'audio') &&
      typeof content.data === 'string' &&
      typeof content.mimeType === 'string'
    ) {
      if (content.data.length > limits.maxRequestBytes)
        throw new InvalidArgumentError(`the client's sampling answer is over ${limits.maxRequestBytes} bytes`);
      result.content = { type: content.type, data: content.data, mimeType: content.mimeType };
    } else throw new InvalidArgumentError("the client's sampling answer has content this library does not read (text, image or audio)");
    if (typeof answer.stopReason === 'string') result.stopReason = answer.stopReason;
    return result;
  };
}

function check(request: McpSampleRequest, limits: Required<McpSamplingLimits>): void {
  if (!Array.isArray(request.messages) || request.messages.length === 0)
    throw new InvalidArgumentError('a sampling request needs at least one message');
  if (request.messages.length > limits.maxMessages)
    throw new InvalidArgumentError(`a sampling request may carry at most ${limits.maxMessages} messages, not ${request.messages.length}`);
  if (!Number.isInteger(request.maxTokens) || request.maxTokens < 1 || request.maxTokens > limits.maxTokens)
    throw new InvalidArgumentError(`a sampling request's maxTokens must be a whole number from 1 to ${limits.maxTokens}`);
  const bytes = Buffer.byteLength(JSON.stringify(request) ?? '', 'utf8');
  if (bytes > limits.maxRequestBytes)
    throw new InvalidArgumentError(`a sampling request is ${bytes} bytes; at most ${limits.maxRequestBytes} are sent`);
}
