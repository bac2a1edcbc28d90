import { isToolContent, type ToolContent } from '../../results/content';
import { failure, success } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';

/** An MCP server's `tools/call` result as a ToolResult: text joined as `output`, everything kept as content. */
export function fromMcpResult(
  result: { content?: unknown; isError?: unknown; structuredContent?: unknown },
  maxOutputChars: number,
): ToolResult {
  const content = Array.isArray(result.content) ? result.content.map(toolContentOf) : [];
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

/**
 * One MCP content item as a content part: text, images, audio and embedded resources are
 * already ours; a `resource_link` at an http(s) URL is media by URL (an image, audio or a
 * file by its media type), so the model is shown it; any other link is named in words.
 */
function toolContentOf(item: unknown): ToolContent {
  if (isToolContent(item)) return item;
  const link = item as { type?: unknown; uri?: unknown; name?: unknown; mimeType?: unknown } | null;
  if (link?.type === 'resource_link' && typeof link.uri === 'string') {
    const name = typeof link.name === 'string' ? link.name : link.uri;
    if (!/^https?:/i.test(link.uri)) return { type: 'text', text: `[${name}: ${link.uri}]` };
    const mimeType = typeof link.mimeType === 'string' ? link.mimeType : 'application/octet-stream';
    const type = mimeType.startsWith('image/') ? 'image' : mimeType.startsWith('audio/') ? 'audio' : 'file';
    return { type, url: link.uri, mimeType, filename: name };
  }
  return { type: 'text', text: `[content of type ${String((item as { type?: unknown } | null)?.type)} left out]` };
}
