import { contentOf, type ToolContent } from '../../results/content';
import type { PendingRequest, ToolResult } from '../../results/wire';

/** An MCP `tools/call` result, as this entry sends and reads it. */
export interface McpCallResult {
  content: ToolContent[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** Where an out-of-band suspension is named in a result's `_meta`, for hosts that read it. */
export const PENDING_META = 'toolnexus/pending';

/**
 * A Toolkit result as an MCP result: its rich content when it has some, else its `output` as
 * text; a tool with an output schema also sends the returned object as `structuredContent`.
 */
export function toMcpResult(result: ToolResult, outputSchema: unknown): McpCallResult {
  const content = contentOf(result) ?? [{ type: 'text', text: result.output }];
  if (result.isError) return { content, isError: true };
  if (outputSchema === undefined) return { content };
  const structured = parsedObject(result.output);
  if (!structured)
    return { content: [{ type: 'text', text: 'the tool declares an output schema but did not return a JSON object' }], isError: true };
  return { content, structuredContent: structured };
}

/** The result for a suspension the client cannot be asked: what to answer, and where. */
export function outOfBandResult(request: PendingRequest, why: string): McpCallResult {
  const text =
    `This call is waiting for a person (${request.kind}): ${request.prompt}` +
    (request.url ? `\n${request.url}` : '') +
    `\nIt was not asked here because ${why}. Suspension id: ${request.id}. ` +
    'The host answers it out of band (ResumeCoordinator.resolve); the call then runs exactly once.';
  return { content: [{ type: 'text', text }], isError: true, _meta: { [PENDING_META]: request } };
}

function parsedObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
