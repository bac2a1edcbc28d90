import { mediaInWords, NOT_LOADED, withWords } from './media';
import type { ToolMessage } from './types';

/** A media part of a `functionResponse` (Gemini's multimodal function responses). */
type ResponsePart = { inlineData: { mimeType: string; data: string } } | { fileData: { mimeType: string; fileUri: string } };

/** The media types Gemini takes in a function response. */
const RESPONSE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'application/pdf', 'text/plain']);

/** Where a tool result's media go: inside its `functionResponse` (Gemini 3 on), or beside it (earlier models). */
export type MediaPlacement = 'inside' | 'beside';

/** The placement a model takes: inside for Gemini 3 and later (and names that say no version), beside for Gemini 1 and 2. */
export function placementOf(model: string): MediaPlacement {
  const version = /(?:^|\/)gemini-(\d+)/.exec(model)?.[1];
  return version !== undefined && Number(version) < 3 ? 'beside' : 'inside';
}

/**
 * A tool result as a `functionResponse` (`response` and, inside, `parts`) and the parts sent
 * beside it: its text in `response` (`output`, or `error` for an error), its images and
 * documents as `inlineData` (bytes) or `fileData` (a URL); any other media described in words
 * in the text. Gemini 3 takes them inside the function response (multimodal function
 * responses); earlier models only beside it, each after a line saying whose result it is.
 */
export function functionResponseOf(
  message: ToolMessage,
  placement: MediaPlacement,
): { response: Record<string, unknown>; parts?: ResponsePart[]; beside: Array<ResponsePart | { text: string }> } {
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
  if (parts.length === 0) return { response, beside: [] };
  if (placement === 'inside') return { response, parts, beside: [] };
  return { response, beside: parts.flatMap((part) => [{ text: `The result of ${message.name} shows this ${kindOf(part)}:` }, part]) };
}

function kindOf(part: ResponsePart): string {
  const mimeType = 'inlineData' in part ? part.inlineData.mimeType : part.fileData.mimeType;
  return mimeType.startsWith('image/') ? 'image' : 'file';
}
