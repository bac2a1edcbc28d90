import { success } from './helpers';
import type { ToolResult } from './wire';

/**
 * Rich content a result may carry next to its plain `output`, in the shapes the Model
 * Context Protocol uses (text, base64 image or audio, an embedded resource). A host that can
 * show it (an MCP client) gets it; a chat model still gets `output`.
 */
export type ToolContent =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: ToolResourceContent };

/** An embedded resource: text or a base64 `blob`, named by `uri`. */
export type ToolResourceContent = { uri: string; mimeType?: string } & ({ text: string } | { blob: string });

/** Where a result keeps its rich content. */
const CONTENT_KEY = 'content';

/**
 * A successful result whose `output` is `value` (as {@link success} words it) and which also
 * carries `content` for hosts that show rich content.
 *
 * @example
 * ```ts
 * return withContent('A red pixel', [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }])
 * ```
 */
export function withContent(value: unknown, content: ToolContent[], metadata?: Record<string, unknown>): ToolResult {
  return success(value, { ...metadata, [CONTENT_KEY]: content.slice() });
}

/** The rich content a result carries, or `undefined` when it has none. */
export function contentOf(result: ToolResult): ToolContent[] | undefined {
  const content = result.metadata?.[CONTENT_KEY];
  return Array.isArray(content) && content.every(isToolContent) ? content : undefined;
}

function isToolContent(value: unknown): value is ToolContent {
  if (typeof value !== 'object' || value === null) return false;
  const item = value as Record<string, unknown>;
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string';
    case 'image':
    case 'audio':
      return typeof item.data === 'string' && typeof item.mimeType === 'string';
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
