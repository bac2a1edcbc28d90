/**
 * Where an MCP tool call carries its idempotency key (docs/mcp.md, "Idempotency keys"): a
 * namespaced `_meta` key, as the protocol reserves unprefixed names for itself. An
 * `McpToolSource` sends `ctx.idempotencyKey` there; `serveMcp` reads it.
 */
export const MCP_IDEMPOTENCY_META = 'io.toolnexus/idempotency-key';
