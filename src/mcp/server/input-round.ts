import { failure } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';

/** One request a tool puts to a 2026-07-28 client in an input round (MRTR `inputRequests` values). */
export type McpInputRequest =
  | { method: 'elicitation/create'; params: Record<string, unknown> }
  /** @deprecated Sampling is deprecated as of MCP 2026-07-28 (SEP-2577): call a model of your own. */
  | { method: 'sampling/createMessage'; params: Record<string, unknown> }
  /** @deprecated Roots are deprecated as of MCP 2026-07-28 (SEP-2577). */
  | { method: 'roots/list'; params?: Record<string, unknown> };

/** What {@link inputRound} asks: requests keyed by names the tool picks, and state the tool reads back next round. */
export interface McpInputRound {
  inputRequests?: Record<string, McpInputRequest>;
  /**
   * The tool's own state for its next round, read back as `ctx.mcp.requestState`. serveMcp
   * seals it (with the principal, the request and a TTL), so what comes back is what the tool
   * gave; it is readable by the client, so keep secrets out of it.
   */
  requestState?: string;
}

/** Where an input round travels on a result, for serveMcp to find. */
export const INPUT_ROUND_META = 'toolnexus/inputRound';

/**
 * An **input round** (docs/mcp.md, "Input rounds"): a tool asks a 2026-07-28 MCP client for
 * input and is called again with the answers on `ctx.mcp.inputResponses` (MRTR). Nothing is
 * stored and nothing is claimed: the tool runs again from the start each round. For what must
 * happen at most once, or be answered by someone other than the caller, suspend instead
 * (`pending`, a declared `approval`): serveMcp turns a suspension into the same round trip,
 * durably and exactly once. A 2025-era client cannot be asked this way: it gets an error result.
 *
 * @example
 * ```ts
 * run(_args: object, ctx?: McpToolContext) {
 *   const answer = ctx?.mcp.inputResponses?.user_name as { action?: string; content?: { name?: string } } | undefined
 *   if (answer?.action === 'accept') return `Hello, ${answer.content?.name}!`
 *   return inputRound({ inputRequests: { user_name: { method: 'elicitation/create', params: { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } } } } })
 * }
 * ```
 */
export function inputRound(round: McpInputRound): ToolResult {
  return failure('this tool needs input that only an MCP 2026-07-28 client can give (an input round)', {
    [INPUT_ROUND_META]: { ...round },
  });
}

/** The input round a result asks for, or `undefined`. */
export function inputRoundOf(result: ToolResult): McpInputRound | undefined {
  const round = result.metadata?.[INPUT_ROUND_META];
  if (typeof round !== 'object' || round === null) return undefined;
  const { inputRequests, requestState } = round as McpInputRound;
  const out: McpInputRound = {};
  if (inputRequests && typeof inputRequests === 'object') out.inputRequests = inputRequests;
  if (typeof requestState === 'string') out.requestState = requestState;
  return out.inputRequests || out.requestState !== undefined ? out : undefined;
}
