import { mediaInWords, NOT_LOADED } from '../../models/media';
import type { ToolMedia } from '../../models/types';

/**
 * One media part as the AI SDK's tool-result `content` takes it (the same shape in a prompt a
 * provider reads and in a tool's `toModelOutput`): a `file` with its bytes (base64) or URL, which
 * each `@ai-sdk/*` provider turns into its own image or document; a part kept by reference that
 * nobody could load is described in words.
 */
export function aiSdkMediaPart(
  media: ToolMedia,
):
  | { type: 'text'; text: string }
  | { type: 'file'; data: { type: 'data'; data: string } | { type: 'url'; url: URL }; mediaType: string; filename?: string } {
  if ('ref' in media) return { type: 'text', text: mediaInWords(media, NOT_LOADED) };
  const data = 'url' in media ? { type: 'url' as const, url: new URL(media.url) } : { type: 'data' as const, data: media.data };
  return media.filename === undefined
    ? { type: 'file', data, mediaType: media.mimeType }
    : { type: 'file', data, mediaType: media.mimeType, filename: media.filename };
}
