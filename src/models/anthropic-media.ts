import { mediaInWords, NOT_LOADED, withWords } from './media';
import type { ToolMedia } from './types';

/** A `tool_result`'s content blocks beside its text, as the messages API documents them. */
export type ResultBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string } }
  | {
      type: 'document';
      source:
        | { type: 'base64'; media_type: 'application/pdf'; data: string }
        | { type: 'url'; url: string }
        | { type: 'text'; media_type: 'text/plain'; data: string };
      title?: string;
    };

/** The image types the messages API takes. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * A tool result's content when it shows media: its text, then an `image` block per image
 * (base64 or URL source), a `document` block per PDF (base64 or URL) or plain-text file;
 * anything else (audio, other files) described in words after the text.
 */
export function toolResultBlocks(text: string, media: readonly ToolMedia[]): ResultBlock[] {
  const blocks: ResultBlock[] = [];
  const words: string[] = [];
  for (const part of media) {
    const block = blockOf(part);
    if (typeof block === 'string') words.push(mediaInWords(part, block));
    else blocks.push(block);
  }
  const said = withWords(text, words);
  return said === '' ? blocks : [{ type: 'text', text: said }, ...blocks];
}

/** The part's block, or why it has none. */
function blockOf(part: ToolMedia): ResultBlock | string {
  if ('ref' in part) return NOT_LOADED;
  if (part.type === 'image') {
    if (!IMAGE_TYPES.has(part.mimeType)) return 'this API takes JPEG, PNG, GIF and WebP images';
    return {
      type: 'image',
      source: 'url' in part ? { type: 'url', url: part.url } : { type: 'base64', media_type: part.mimeType, data: part.data },
    };
  }
  if (part.type === 'file' && part.mimeType === 'application/pdf') {
    const source =
      'url' in part
        ? ({ type: 'url', url: part.url } as const)
        : ({ type: 'base64', media_type: 'application/pdf', data: part.data } as const);
    return titled({ type: 'document', source }, part.filename);
  }
  if (part.type === 'file' && part.mimeType === 'text/plain' && 'data' in part)
    return titled(
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(part.data, 'base64').toString('utf8') } },
      part.filename,
    );
  return part.type === 'audio' ? 'this API takes no audio' : 'this API takes PDF and plain-text documents';
}

function titled(block: Extract<ResultBlock, { type: 'document' }>, filename: string | undefined): ResultBlock {
  return filename === undefined ? block : { ...block, title: filename };
}
