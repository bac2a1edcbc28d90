/**
 * Where an A2A message carries its call's idempotency key (docs/a2a.md, "Idempotency keys"): a
 * namespaced key of the message's `metadata`. `a2aAgentTool` sends `ctx.idempotencyKey` there
 * (and names the message after it); `a2aHandler` reads it.
 */
export const A2A_IDEMPOTENCY_METADATA = 'io.toolnexus/idempotency-key';
