import { ProtocolError, type CreateMessageRequest, type CreateMessageResult } from '@modelcontextprotocol/client';
import { messageOf } from '../../errors/message';
import { newPendingId } from '../../results/helpers';
import type { ModelResponse } from '../../models/types';
import type { PendingRequest } from '../../results/wire';
import type { WaitFor } from '../../suspension/answers';
import { systemClock, type Clock } from '../../timing/clock';
import type { McpSamplingOptions, McpSamplingRequestInfo } from './types';

const DEFAULTS = {
  maxTokens: 4096,
  maxMessages: 100,
  maxRequestBytes: 1024 * 1024,
  maxRequestsPerWindow: 10,
  windowMs: 60_000,
  maxTokensPerConnection: 50_000,
};
/**
 * When a model reports no usage, its text is cut at this many characters per token asked
 * for: about what a token of English holds, so a model that ignored the limit cannot send more.
 */
const CHARS_PER_TOKEN = 4;
/** The MCP spec's code for a sampling request the user rejected. */
const USER_REJECTED = -1;
const MAX_SHOWN = 2000;

/**
 * What one server connection's sampling requests have used: when they came (for the sliding
 * window) and the tokens spent or held by calls under way (for the connection's budget).
 */
export class SamplingMeter {
  private readonly times: number[] = [];
  private spent = 0;
  private held = 0;

  constructor(private readonly clock: Clock = systemClock) {}

  /** Counts a request in the window, or says why it may not be made. */
  admit(maxRequests: number, windowMs: number): string | undefined {
    const now = this.clock.now();
    while (this.times.length > 0 && (this.times[0] as number) <= now - windowMs) this.times.shift();
    if (this.times.length >= maxRequests) return `more than ${maxRequests} sampling requests in ${windowMs} ms from this server`;
    this.times.push(now);
    return undefined;
  }

  /** Holds `tokens` of the budget for a call, or says why it may not be made. */
  hold(tokens: number, budget: number): string | undefined {
    const left = budget - this.spent - this.held;
    if (tokens > left) return `sampling request for ${tokens} tokens refused: ${Math.max(left, 0)} of this connection's ${budget} are left`;
    this.held += tokens;
    return undefined;
  }

  /** Gives back what a call held and charges what it cost. */
  settle(held: number, cost: number): void {
    this.held -= held;
    this.spent += cost;
  }
}

/**
 * Answers one sampling request: bounded (its size, the server's rate and its token budget),
 * then the host's policy (and a person, when it says ask), then the host's model, asked for
 * no more than the request's `maxTokens`. Nothing reaches the model unless the policy said yes.
 */
export async function answerSampling(
  server: string,
  params: CreateMessageRequest['params'],
  options: McpSamplingOptions,
  meter: SamplingMeter,
  waitFor: WaitFor | undefined,
  signal: AbortSignal,
): Promise<CreateMessageResult> {
  const limits = { ...DEFAULTS, ...options };
  const overRate = meter.admit(limits.maxRequestsPerWindow, limits.windowMs);
  if (overRate) throw new ProtocolError(USER_REJECTED, `sampling request refused: ${overRate}`);
  const bytes = Buffer.byteLength(JSON.stringify(params) ?? '', 'utf8');
  if (bytes > limits.maxRequestBytes)
    throw new ProtocolError(USER_REJECTED, `sampling request of ${bytes} bytes refused (at most ${limits.maxRequestBytes})`);
  if (params.messages.length > limits.maxMessages)
    throw new ProtocolError(
      USER_REJECTED,
      `sampling request of ${params.messages.length} messages refused (at most ${limits.maxMessages})`,
    );
  if (params.maxTokens > limits.maxTokens)
    throw new ProtocolError(USER_REJECTED, `sampling request for ${params.maxTokens} tokens refused (at most ${limits.maxTokens})`);
  const maxTokens = params.maxTokens;
  const overBudget = meter.hold(maxTokens, limits.maxTokensPerConnection);
  if (overBudget) throw new ProtocolError(USER_REJECTED, overBudget);
  let cost = maxTokens;
  try {
    const response = await approvedAnswer(server, params, options, waitFor, signal);
    const { inputTokens, outputTokens } = response.usage;
    if (inputTokens > 0 || outputTokens > 0) cost = inputTokens + outputTokens;
    if (outputTokens > maxTokens)
      throw new ProtocolError(
        USER_REJECTED,
        `the host's model gave ${outputTokens} tokens, over the ${maxTokens} asked for; its answer is withheld`,
      );
    const unmeasured = outputTokens === 0 && response.text.length > maxTokens * CHARS_PER_TOKEN;
    const text = unmeasured ? response.text.slice(0, maxTokens * CHARS_PER_TOKEN) : response.text;
    return {
      role: 'assistant',
      model: options.model.provider,
      content: { type: 'text', text },
      stopReason: unmeasured || response.stopReason === 'length' || response.stopReason === 'max_tokens' ? 'maxTokens' : 'endTurn',
    };
  } catch (error) {
    // The policy's or the person's no cost nothing.
    if (error instanceof NotAsked) cost = 0;
    throw error instanceof NotAsked ? error.refusal : error;
  } finally {
    meter.settle(maxTokens, cost);
  }
}

/** The policy or the person said no: the model was never called. */
class NotAsked extends Error {
  constructor(readonly refusal: ProtocolError) {
    super(refusal.message);
  }
}

/** The host's policy, a person when it says ask, then the host's model, capped at the request's maxTokens. */
async function approvedAnswer(
  server: string,
  params: CreateMessageRequest['params'],
  options: McpSamplingOptions,
  waitFor: WaitFor | undefined,
  signal: AbortSignal,
): Promise<ModelResponse> {
  const messages = params.messages.map((message) => ({ role: message.role, text: textOf(message.content) }));
  const info: McpSamplingRequestInfo = {
    server,
    messages,
    maxTokens: params.maxTokens,
    ...(params.systemPrompt !== undefined ? { systemPrompt: params.systemPrompt } : {}),
  };
  let verdict = await options.approve(info);
  if (verdict === 'ask') verdict = await askPerson(info, waitFor);
  if (verdict !== true) throw new NotAsked(new ProtocolError(USER_REJECTED, 'User rejected sampling request'));
  try {
    return await options.model.complete({
      ...(params.systemPrompt !== undefined ? { system: params.systemPrompt } : {}),
      messages: messages.map((message) => ({ role: message.role, content: message.text })),
      tools: [],
      maxOutputTokens: params.maxTokens,
      signal,
    });
  } catch (error) {
    // The model's own failure, as its message says (the model's errors carry no secrets).
    throw new ProtocolError(USER_REJECTED, `the host's model failed: ${messageOf(error)}`);
  }
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
