import { InvalidArgumentError } from '../errors';
import { success } from './helpers';
import type { ToolResult } from './wire';

/**
 * Rich content a result carries next to its plain `output`: text, and media (an image, a
 * recording, a file) the model is shown in its provider's own format and a host (an MCP
 * client, a chat page) can show. The MCP shapes (text, base64 image or audio, an embedded
 * resource) are kept as MCP has them; media may also be given by URL, and a stored result
 * may hold media by reference (`ref`, into the coordinator's content store) once it is larger
 * than the bound for stored results (docs/tools.md, "Rich results").
 */
export type ToolContent = { type: 'text'; text: string } | MediaContent | { type: 'resource'; resource: ToolResourceContent };

/**
 * Media: base64 `data`, a `url` (https or a `data:` URL) the provider fetches, or a `ref` a
 * content store resolves (set by the bound for stored results, never by a tool), with its
 * IANA media type (`image/png`, `application/pdf`).
 */
type MediaContent = { type: 'image' | 'audio' | 'file'; mimeType: string; filename?: string } & (
  { data: string } | { url: string } | { ref: string; size: number }
);

/** Media as a tool gives it to {@link withContent}: bytes may be a `Uint8Array` (a `Buffer`), made base64 there. */
type MediaInit = { type: 'image' | 'audio' | 'file'; mimeType: string; filename?: string } & (
  { data: string | Uint8Array } | { url: string }
);

/** An embedded resource: text or a base64 `blob`, named by `uri`. */
export type ToolResourceContent = { uri: string; mimeType?: string } & ({ text: string } | { blob: string });

/** Where a result keeps its rich content. */
const CONTENT_KEY = 'content';

/**
 * A successful result whose `output` is `value` (as {@link success} words it) and which also
 * carries `content`: the model reads `output` and sees the media; a host shows the content.
 *
 * @example
 * ```ts
 * return withContent('A chart of last week', [{ type: 'image', data: pngBytes, mimeType: 'image/png' }])
 * ```
 * @throws {@link InvalidArgumentError} a part that is not content (media without a media type,
 * with both or neither of `data` and `url`, a URL that is not http(s) or `data:`).
 */
export function withContent(
  value: unknown,
  content: ReadonlyArray<ToolContent | MediaInit>,
  metadata?: Record<string, unknown>,
): ToolResult {
  return success(value, { ...metadata, [CONTENT_KEY]: content.map(checkedPart) });
}

/** The rich content a result carries, or `undefined` when it has none. */
export function contentOf(result: ToolResult): ToolContent[] | undefined {
  const content = result.metadata?.[CONTENT_KEY];
  return Array.isArray(content) && content.every(isToolContent) ? content : undefined;
}

/** `result` with `content` in place of the content it carried. */
export function replaceContent(result: ToolResult, content: ToolContent[]): ToolResult {
  return { ...result, metadata: { ...result.metadata, [CONTENT_KEY]: content } };
}

/** True for the media parts of content (an image, a recording, a file), whatever their source. */
export function isMedia(part: ToolContent): part is MediaContent {
  return part.type === 'image' || part.type === 'audio' || part.type === 'file';
}

function checkedPart(part: ToolContent | MediaInit, index: number): ToolContent {
  if (typeof part !== 'object' || part === null) throw new InvalidArgumentError(`content part ${index} is not an object`);
  if (part.type === 'image' || part.type === 'audio' || part.type === 'file') {
    const problem = mediaProblem(part);
    if (problem) throw new InvalidArgumentError(`content part ${index} (${part.type}) ${problem}`);
    if ('data' in part && typeof part.data !== 'string') return { ...part, data: base64Of(part.data) };
    return part as ToolContent;
  }
  if (!isToolContent(part)) throw new InvalidArgumentError(`content part ${index} is not text, an image, audio, a file or a resource`);
  return part;
}

function mediaProblem(part: Record<string, unknown>): string | undefined {
  if (typeof part.mimeType !== 'string' || !/^[\w.+-]+\/[\w.+-]+$/.test(part.mimeType))
    return 'needs a media type such as image/png in mimeType';
  if (part.filename !== undefined && typeof part.filename !== 'string') return 'has a filename that is not a string';
  const sources = ['data', 'url', 'ref'].filter((key) => part[key] !== undefined);
  if (sources.length !== 1 || sources[0] === 'ref') return 'needs exactly one of data (base64 or bytes) and url';
  if (part.url !== undefined) {
    if (typeof part.url !== 'string' || !/^(https?:|data:)/i.test(part.url)) return 'has a url that is not http(s) or a data: URL';
    return undefined;
  }
  if (typeof part.data === 'string') return /^[A-Za-z0-9+/]*={0,2}$/.test(part.data) ? undefined : 'has data that is not base64';
  return part.data instanceof Uint8Array ? undefined : 'has data that is neither base64 text nor bytes';
}

/** Decoded bytes of base64 text, without decoding it. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function base64Of(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** True for a value shaped like one {@link ToolContent} part (a stored one read back, say). */
export function isToolContent(value: unknown): value is ToolContent {
  if (typeof value !== 'object' || value === null) return false;
  const item = value as Record<string, unknown>;
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string';
    case 'image':
    case 'audio':
    case 'file':
      return (
        typeof item.mimeType === 'string' &&
        (item.filename === undefined || typeof item.filename === 'string') &&
        (typeof item.data === 'string' || typeof item.url === 'string' || (typeof item.ref === 'string' && typeof item.size === 'number'))
      );
    case 'resource': {
      const resource = item.resource as Record<string, unknown> | null | undefined;
      return (
        typeof resource === 'object' &&
        resource !== null &&
        typeof resource.uri === 'string' &&
        (typeof resource.text === 'string' || typeof resource.blob === 'string')
      );
    }
    default:
      return false;
  }
}
