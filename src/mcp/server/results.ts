import { contentOf, isMedia, type ToolContent, type ToolResourceContent } from '../../results/content';
import type { PendingRequest, ToolResult } from '../../results/wire';

/** One item of an MCP result's `content`, as the protocol (2025-06-18) has them. */
export type McpContent =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: ToolResourceContent }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string };

/** An MCP `tools/call` result, as this entry sends and reads it. */
export interface McpCallResult {
  content: McpContent[];
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
  const content: McpContent[] = contentOf(result)?.map(mcpContentOf) ?? [{ type: 'text', text: result.output }];
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

/**
 * One content part as MCP has it: text, base64 images and audio and embedded resources as
 * they are; a file's bytes as an embedded resource (a `blob` named by its filename); media by
 * URL as a `resource_link`; media a stored result keeps by reference described in words.
 */
function mcpContentOf(part: ToolContent): McpContent {
  if (!isMedia(part)) return part;
  const name = part.filename ?? part.type;
  if ('ref' in part)
    return { type: 'text', text: `[${part.type} ${name} (${part.mimeType}, ${part.size} bytes): kept by reference, not sent here]` };
  if ('url' in part) return { type: 'resource_link', uri: part.url, name: part.filename ?? lastSegment(part.url), mimeType: part.mimeType };
  if (part.type === 'file')
    return { type: 'resource', resource: { uri: `file:///${encodeURIComponent(name)}`, mimeType: part.mimeType, blob: part.data } };
  return { type: part.type, data: part.data, mimeType: part.mimeType };
}

function lastSegment(url: string): string {
  if (url.startsWith('data:')) return 'data';
  return url.split(/[?#]/)[0]?.split('/').filter(Boolean).pop() ?? url;
}
