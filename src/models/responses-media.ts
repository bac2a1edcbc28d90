import { dataUrl, mediaInWords, NOT_LOADED, withWords } from './media';
import type { ToolMessage } from './types';

/** One item of a `function_call_output`'s `output` list, as the Responses API documents it. */
type OutputItem =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string }
  | { type: 'input_file'; filename: string; file_data: string }
  | { type: 'input_file'; file_url: string };

/**
 * A tool result's `output`: its text alone, or, when it shows media, the list the Responses
 * API takes there: `input_text`, then an `input_image` per image (`image_url` a `data:` URL or
 * the image's URL) and an `input_file` per file (`file_data` a `data:` URL with its filename,
 * or `file_url`). Audio, which a tool output cannot carry, is described in words.
 */
export function functionCallOutput(message: ToolMessage): string | OutputItem[] {
  if (!message.media) return message.content;
  const items: OutputItem[] = [];
  const words: string[] = [];
  for (const part of message.media) {
    if ('ref' in part) words.push(mediaInWords(part, NOT_LOADED));
    else if (part.type === 'image') items.push({ type: 'input_image', image_url: 'url' in part ? part.url : dataUrl(part) });
    else if (part.type === 'file')
      items.push(
        'url' in part
          ? { type: 'input_file', file_url: part.url }
          : { type: 'input_file', filename: part.filename ?? 'file', file_data: dataUrl(part) },
      );
    else words.push(mediaInWords(part, 'this API takes no audio in a tool result'));
  }
  const text = withWords(message.content, words);
  return text === '' ? items : [{ type: 'input_text', text }, ...items];
}
