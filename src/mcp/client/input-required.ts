/**
 * A remote server's `input_required` (MCP 2026-07-28, Multi Round-Trip Requests): the server
 * ends its `tools/call` asking for input (`inputRequests`, with an opaque `requestState`), and
 * the client retries the same call with `inputResponses` and the state echoed byte for byte.
 * Here each elicitation it asks becomes a request of this library, so the wait is a suspension
 * of the local call: in process with the source's `waitFor`, durable under a durable
 * coordinator (docs/mcp.md, "A remote input_required").
 */
import { failure, pending } from '../../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../../results/wire';
import type { ToolContext } from '../../toolkit/context';
import { replyOf, withDefaults } from './elicitation';

/** The key of a request's `data` that carries the round trip under way. */
export const INPUT_KEY = 'mcpInput';
/** The longest `requestState` and input requests kept with a suspension, in characters of JSON. */
export const MAX_KEPT_INPUT_CHARS = 256 * 1024;

/** A server's `input_required` answer to a call, as read off the wire. */
export interface InputRequired {
  inputRequests: Record<string, { method?: unknown; params?: unknown }>;
  requestState?: string;
}

/**
 * What a suspension keeps of the round trip in `data.mcpInput`, enough to send the retry from
 * any process: the server, the state to echo, the key the request answers, the elicitations
 * still to ask and the responses gathered so far.
 */
export interface KeptInput {
  server: string;
  requestState?: string;
  key: string;
  asked: Record<string, { method: string; params: Record<string, unknown> }>;
  responses: Record<string, unknown>;
  /**
   * The remote task that asks (SEP-2663; docs/mcp.md, "Tasks, as a client"): the answers go
   * by `tasks/update` to it instead of a retry of the call.
   */
  taskId?: string;
  /** The task's input keys already answered, so a poll that still shows them does not ask again. */
  answered?: string[];
}

/** What a call's next round sends: the responses, with the state to echo (MRTR) or the task to update (tasks). */
export interface Retry {
  inputResponses: Record<string, unknown>;
  requestState?: string;
  taskId?: string;
  answered?: string[];
}

/** True for a `tools/call` answer that asks for input instead of giving a result. */
export function isInputRequired(result: unknown): result is InputRequired & { resultType: 'input_required' } {
  return typeof result === 'object' && result !== null && (result as { resultType?: unknown }).resultType === 'input_required';
}

/** Splits a server's input requests into the elicitations a person answers and the rest. */
export function splitInputRequests(asked: InputRequired['inputRequests']): {
  elicitations: KeptInput['asked'];
  others: Array<{ key: string; method: string; params: Record<string, unknown> }>;
} {
  const elicitations: KeptInput['asked'] = {};
  const others: Array<{ key: string; method: string; params: Record<string, unknown> }> = [];
  for (const [key, request] of Object.entries(asked ?? {})) {
    const method = typeof request?.method === 'string' ? request.method : '';
    const params = typeof request?.params === 'object' && request.params !== null ? (request.params as Record<string, unknown>) : {};
    if (method === 'elicitation/create') elicitations[key] = { method, params };
    else others.push({ key, method, params });
  }
  return { elicitations, others };
}

/**
 * The suspension of the call for the first elicitation still to ask: a request of kind
 * `input` with the form's schema as `data.schema`, or `authorization` with the `url` of a
 * URL elicitation; `data.mcpInput` keeps what the retry needs. A failure when what would be
 * kept is over {@link MAX_KEPT_INPUT_CHARS} (a server's state is not stored without bound).
 */
export function suspendFor(kept: Omit<KeptInput, 'key'>, followUp: boolean): ToolResult {
  const [key, first] = Object.entries(kept.asked)[0] ?? [];
  if (key === undefined || first === undefined) return failure(`MCP server ${kept.server}: input_required with nothing to ask`);
  const rest = { ...kept.asked };
  delete rest[key];
  const input: KeptInput = { server: kept.server, key, asked: rest, responses: kept.responses, ...taskOf(kept) };
  if (kept.requestState !== undefined) input.requestState = kept.requestState;
  const size = JSON.stringify(input).length + JSON.stringify(first.params).length;
  if (size > MAX_KEPT_INPUT_CHARS)
    return failure(
      `MCP server ${kept.server}: its input_required (${size} characters of state and requests) is over the ${MAX_KEPT_INPUT_CHARS} kept with a suspension`,
    );
  const params = first.params;
  const message =
    typeof params.message === 'string' && params.message !== '' ? params.message : `The MCP server ${kept.server} asks for input`;
  const url = params.mode === 'url' && typeof params.url === 'string' ? params.url : undefined;
  const request: Omit<PendingRequest, 'id'> = {
    kind: url !== undefined ? 'authorization' : 'input',
    prompt: message,
    data: {
      server: kept.server,
      ...(url === undefined && params.requestedSchema !== undefined ? { schema: params.requestedSchema } : {}),
      [INPUT_KEY]: input,
      // The server asked again on the same call: the chain may repeat the kind.
      ...(followUp ? { followUp: true } : {}),
    },
  };
  if (url !== undefined) request.url = url;
  return pending(request);
}

/** The round trip a replay answers: this source's request for `server`, answered by `ctx.answer`. */
export function keptInputOf(
  ctx: ToolContext | undefined,
  server: string,
): { kept: KeptInput; answer: Answer; schema: unknown } | undefined {
  const request = ctx?.replay?.request;
  const answer = ctx?.answer;
  if (!request || !answer || answer.id !== request.id) return undefined;
  const kept = request.data?.[INPUT_KEY] as KeptInput | undefined;
  if (typeof kept !== 'object' || kept === null || kept.server !== server || typeof kept.key !== 'string') return undefined;
  if (kept.requestState !== undefined && typeof kept.requestState !== 'string') return undefined;
  if (kept.taskId !== undefined && typeof kept.taskId !== 'string') return undefined;
  if (kept.answered !== undefined && !(Array.isArray(kept.answered) && kept.answered.every((key) => typeof key === 'string')))
    return undefined;
  return { kept, answer, schema: request.data?.schema };
}

/**
 * The elicitation result an answer stands for: a form's content with its defaults filled in
 * (SEP-1034), a URL elicitation's bare accept, or the decline or cancel.
 */
export function elicitResponseOf(answer: Answer, schema: unknown, url: boolean): Record<string, unknown> {
  const reply = replyOf(answer);
  if (reply.action !== 'accept') return { action: reply.action };
  return url ? { action: 'accept' } : { action: 'accept', content: withDefaults(schema, reply.content ?? {}) };
}

/** The retry's inputs once the answer to the last link is in: every response gathered, or the next elicitation to ask. */
export function afterAnswer(
  round: { kept: KeptInput; answer: Answer; schema: unknown },
  url: boolean,
): { retry: Retry } | { result: ToolResult } {
  const { kept, answer, schema } = round;
  const responses = { ...kept.responses, [kept.key]: elicitResponseOf(answer, schema, url) };
  if (Object.keys(kept.asked ?? {}).length > 0)
    return {
      result: suspendFor({ server: kept.server, requestState: kept.requestState, asked: kept.asked, responses, ...taskOf(kept) }, true),
    };
  return {
    retry: { inputResponses: responses, ...(kept.requestState !== undefined ? { requestState: kept.requestState } : {}), ...taskOf(kept) },
  };
}

/** The task fields of what is kept, when the round trip is a task's. */
function taskOf(kept: Pick<KeptInput, 'taskId' | 'answered'>): Pick<KeptInput, 'taskId' | 'answered'> {
  if (kept.taskId === undefined) return {};
  return { taskId: kept.taskId, ...(kept.answered !== undefined ? { answered: kept.answered } : {}) };
}
