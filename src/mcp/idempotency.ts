/**
 * Where an MCP tool call carries its idempotency key (docs/mcp.md, "Idempotency keys"): a
 * namespaced `_meta` key, as the protocol reserves unprefixed names for itself. An
 * `McpToolSource` sends `ctx.idempotencyKey` there; `serveMcp` reads it.
 */
export const MCP_IDEMPOTENCY_META = 'io.toolnexus/idempotency-key';

/**
 * The idempotency key a request's `_meta` carries: `undefined` without one; a value that is not
 * a string reads as `''`, which `executeOnce` refuses (the call does not run) rather than run unkeyed.
 */
export function incomingMcpKey(meta: Record<string, unknown> | undefined): string | undefined {
  const key = meta?.[MCP_IDEMPOTENCY_META];
  return key === undefined ? undefined : typeof key === 'string' ? key : '';
}
