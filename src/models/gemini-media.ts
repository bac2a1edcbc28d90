import { mediaInWords, NOT_LOADED, withWords } from './media';
import type { ToolMessage } from './types';

/** A media part of a `functionResponse` (Gemini's multimodal function responses). */
type ResponsePart = { inlineData: { mimeType: string; data: string } } | { fileData: { mimeType: string; fileUri: string } };

/** The media types Gemini takes in a function response. */
const RESPONSE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'application/pdf', 'text/plain']);

/**
 * A tool result as a `functionResponse`'s `response` and `parts`: its text in `response`
 * (`output`, or `error` for an error), its images and documents as `parts` (`inlineData` for
 * bytes, `fileData` for a URL), and any other media described in words in the text.
 */
export function functionResponseOf(message: ToolMessage): { response: Record<string, unknown>; parts?: ResponsePart[] } {
  const parts: ResponsePart[] = [];
  const words: string[] = [];
  for (const part of message.media ?? []) {
    if ('ref' in part) words.push(mediaInWords(part, NOT_LOADED));
    else if (!RESPONSE_TYPES.has(part.mimeType))
      words.push(mediaInWords(part, 'Gemini takes PNG, JPEG and WebP images, PDF and plain text in a function response'));
    else if ('url' in part) parts.push({ fileData: { mimeType: part.mimeType, fileUri: part.url } });
    else parts.push({ inlineData: { mimeType: part.mimeType, data: part.data } });
  }
  const text = withWords(message.content, words);
  const response = message.isError ? { error: text } : { output: text };
  return parts.length > 0 ? { response, parts } : { response };
}
