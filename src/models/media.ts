import { base64Bytes } from '../results/content';
import type { ToolMedia } from './types';

/** Base64 media as a `data:` URL, the form OpenAI's image and file inputs take. */
export function dataUrl(part: { mimeType: string; data: string }): string {
  return `data:${part.mimeType};base64,${part.data}`;
}

/**
 * A media part the provider's API cannot be shown, described in words next to the result's
 * text, so the model knows it was there and why it cannot see it; never dropped in silence.
 */
export function mediaInWords(part: ToolMedia, why: string): string {
  const name = part.filename === undefined ? '' : ` ${part.filename}`;
  const source = 'url' in part ? `at ${part.url}` : `${'ref' in part ? part.size : base64Bytes(part.data)} bytes`;
  return `[${part.type}${name} (${part.mimeType}, ${source}): not shown, ${why}]`;
}

/** A result's text followed by the words for each part left out. */
export function withWords(text: string, words: readonly string[]): string {
  if (words.length === 0) return text;
  return text === '' ? words.join('\n') : `${text}\n${words.join('\n')}`;
}

/** Why a part kept by reference reaches a provider unloaded: the content store no longer had it. */
export const NOT_LOADED = 'it was kept by reference and the content store no longer has it';
