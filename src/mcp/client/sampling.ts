import { McpError, type CreateMessageRequest, type CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import { messageOf } from '../../errors/message';
import { newPendingId } from '../../results/helpers';
import type { PendingRequest } from '../../results/wire';
import type { WaitFor } from '../../suspension/answers';
import type { McpSamplingOptions, McpSamplingRequestInfo } from './types';

const DEFAULTS = { maxTokens: 4096, maxMessages: 100, maxRequestBytes: 1024 * 1024 };
/** The MCP spec's code for a sampling request the user rejected. */
const USER_REJECTED = -1;
const MAX_SHOWN = 2000;

/**
 * Answers one sampling request: bounded, then the host's policy (and a person, when it says
 * ask), then the host's model. Nothing reaches the model unless the policy said yes.
 */
export async function answerSampling(
  server: string,
  params: CreateMessageRequest['params'],
  options: McpSamplingOptions,
  waitFor: WaitFor | undefined,
  signal: AbortSignal,
): Promise<CreateMessageResult> {
  const limits = { ...DEFAULTS, ...options };
  const bytes = Buffer.byteLength(JSON.stringify(params) ?? '', 'utf8');
  if (bytes > limits.maxRequestBytes)
    throw new McpError(USER_REJECTED, `sampling request of ${bytes} bytes refused (at most ${limits.maxRequestBytes})`);
  if (params.messages.length > limits.maxMessages)
    throw new McpError(USER_REJECTED, `sampling request of ${params.messages.length} messages refused (at most ${limits.maxMessages})`);
  if (params.maxTokens > limits.maxTokens)
    throw new McpError(USER_REJECTED, `sampling request for ${params.maxTokens} tokens refused (at most ${limits.maxTokens})`);
  const messages = params.messages.map((message) => ({ role: message.role, text: textOf(message.content) }));
  const info: McpSamplingRequestInfo = {
    server,
    messages,
    maxTokens: params.maxTokens,
    ...(params.systemPrompt !== undefined ? { systemPrompt: params.systemPrompt } : {}),
  };
  let verdict = await options.approve(info);
  if (verdict === 'ask') verdict = await askPerson(info, waitFor);
  if (verdict !== true) throw new McpError(USER_REJECTED, 'User rejected sampling request');
  let response;
  try {
    response = await options.model.complete({
      ...(params.systemPrompt !== undefined ? { system: params.systemPrompt } : {}),
      messages: messages.map((message) => ({ role: message.role, content: message.text })),
      tools: [],
      signal,
    });
  } catch (error) {
    // The model's own failure, as its message says (the model's errors carry no secrets).
    throw new McpError(USER_REJECTED, `the host's model failed: ${messageOf(error)}`);
  }
  return {
    role: 'assistant',
    model: options.model.provider,
    content: { type: 'text', text: response.text },
    stopReason: response.stopReason === 'length' || response.stopReason === 'max_tokens' ? 'maxTokens' : 'endTurn',
  };
}

/** A person approves through the source's waitFor, as an `approval` request naming the server and the question. */
async function askPerson(info: McpSamplingRequestInfo, waitFor: WaitFor | undefined): Promise<boolean> {
  if (!waitFor) return false;
  const last = info.messages[info.messages.length - 1]?.text ?? '';
  const request: PendingRequest = {
    id: newPendingId(),
    kind: 'approval',
    prompt: `MCP server ${info.server} asks the model: ${last.slice(0, MAX_SHOWN)}`,
    data: { server: info.server, messages: info.messages.length, maxTokens: info.maxTokens },
  };
  const answer = await waitFor(request);
  return answer.ok === true;
}

function textOf(content: unknown): string {
  const item = content as { type?: unknown; text?: unknown; mimeType?: unknown };
  if (item.type === 'text' && typeof item.text === 'string') return item.text;
  // The ChatModel interface carries text: a picture or clip is named, not sent.
  return `[${typeof item.type === 'string' ? item.type : 'unknown'} content${typeof item.mimeType === 'string' ? ` (${item.mimeType})` : ''} left out]`;
}
