import { contentOf, type ToolContent } from '../results/content';
import { failure, success } from '../results/helpers';
import type { PendingRequest, ToolResult } from '../results/wire';

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

/** An MCP server's `tools/call` result as a ToolResult: text joined as `output`, everything kept as content. */
export function fromMcpResult(
  result: { content?: unknown; isError?: unknown; structuredContent?: unknown },
  maxOutputChars: number,
): ToolResult {
  const content = Array.isArray(result.content) ? (result.content as ToolContent[]) : [];
  const texts = content.filter((item): item is { type: 'text'; text: string } => item?.type === 'text' && typeof item.text === 'string');
  // An error's text parts are joined by a blank line, as the other ports of the contract join them.
  let output =
    result.isError === true
      ? texts
          .map((item) => item.text)
          .filter((text) => text.trim() !== '')
          .join('\n\n')
      : texts.map((item) => item.text).join('\n');
  if (output === '' && result.structuredContent !== undefined) output = JSON.stringify(result.structuredContent) ?? '';
  if (output.length > maxOutputChars) output = `${output.slice(0, maxOutputChars)}… (cut at ${maxOutputChars} characters)`;
  const metadata: Record<string, unknown> = {};
  // Rich content and structured content are bounded like the text: past the limit they are left out, saying so.
  if (content.some((item) => item?.type !== 'text')) {
    if (jsonLength(content) <= maxOutputChars) metadata.content = content;
    else output += `\n(rich content of over ${maxOutputChars} characters left out)`;
  }
  if (result.structuredContent !== undefined) {
    if (jsonLength(result.structuredContent) <= maxOutputChars) metadata.structuredContent = result.structuredContent;
    else output += `\n(structured content of over ${maxOutputChars} characters left out)`;
  }
  const meta = Object.keys(metadata).length > 0 ? metadata : undefined;
  return result.isError === true ? failure(output || 'the MCP tool failed without a message', meta) : success(output, meta);
}

function jsonLength(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

function parsedObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
