import type { ToolResult } from '../results/wire';
import { ATTR, MCP_META, OPERATION, SPAN } from './conventions';
import type { OtelAttributes, OtelContext, OtelSpan } from './otel';
import { formatTraceparent, parseTraceparent } from './traceparent';
import type { Tracing } from './telemetry';

const TOOLS_CALL = 'tools/call';

/** Where an MCP request went or came from: its session, and how it travels. */
export interface McpCallSite {
  sessionId?: string;
  /** `pipe` for stdio, `tcp` for HTTP. */
  transport: 'pipe' | 'tcp';
  requestId?: string | number;
}

function attributesOf(tool: string, site: McpCallSite): OtelAttributes {
  return {
    [ATTR.mcpMethod]: TOOLS_CALL,
    [ATTR.operationName]: OPERATION.executeTool,
    [ATTR.toolName]: tool,
    [ATTR.mcpSession]: site.sessionId,
    'network.transport': site.transport,
    [ATTR.jsonrpcRequestId]: site.requestId === undefined ? undefined : String(site.requestId),
  };
}

/**
 * Starts `tools/call {tool}` (CLIENT) under the active context, and the `_meta` that carries
 * its trace context to the server (`traceparent`, as the MCP conventions say).
 */
export function startMcpClientCall(
  tracing: Tracing,
  tool: string,
  site: McpCallSite,
): { span: OtelSpan | undefined; meta: Record<string, string> } {
  const span = tracing.start(SPAN.mcpToolsCall(tool), 'client', attributesOf(tool, site));
  if (!span) return { span, meta: {} };
  const context = span.spanContext();
  return { span, meta: tracing.api.isSpanContextValid(context) ? { [MCP_META.traceparent]: formatTraceparent(context) } : {} };
}

/**
 * Starts `tools/call {tool}` (SERVER), a child of the client's span when the request's `_meta`
 * carries a valid `traceparent`; the returned context is where the call runs.
 */
export function startMcpServerCall(
  tracing: Tracing,
  tool: string,
  site: McpCallSite,
  meta: unknown,
): { span: OtelSpan | undefined; context: OtelContext } {
  const remote = parseTraceparent((meta as Record<string, unknown> | undefined)?.[MCP_META.traceparent]);
  const parent = remote ? tracing.api.trace.setSpanContext(tracing.api.ROOT_CONTEXT, remote) : tracing.api.context.active();
  const span = tracing.start(SPAN.mcpToolsCall(tool), 'server', attributesOf(tool, site), parent);
  return { span, context: tracing.contextOf(span, parent) };
}

/** Ends an MCP span by the call's result: an error result is `tool_error`, a thrown error its type. */
export function endMcpCall(tracing: Tracing, span: OtelSpan | undefined, outcome: ToolResult | { thrown: string }): void {
  if (!span) return;
  if ('thrown' in outcome) tracing.fail(span, outcome.thrown);
  else if (outcome.isError) tracing.fail(span, 'tool_error');
  else span.end();
}
