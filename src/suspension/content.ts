import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors';
import { base64Bytes, contentOf, isMedia, replaceContent, type ToolContent } from '../results/content';
import type { ToolResult } from '../results/wire';

/**
 * Where media larger than the bound for stored results are kept, by reference: a stored
 * result (a suspension's outcome, a run's checkpoint) then holds `{ ref, size }` instead of
 * the bytes, and the runner loads them back before each model call. Every process that
 * continues runs must reach the same store. {@link FileContentStore} keeps them in a
 * directory; an object store (S3, GCS) is a few lines behind this interface.
 */
export interface ContentStore {
  /**
   * Keeps `bytes` and returns the reference {@link get} takes (at most 200 characters of
   * `[\w.:/-]`). A failure (or another reference) leaves the part described in words instead.
   */
  put(bytes: Uint8Array, mimeType: string): Promise<string>;
  /** The bytes kept under `ref`, or `undefined` when the store has none. */
  get(ref: string): Promise<Uint8Array | undefined>;
}

/** How stored results keep their media (the coordinator's `content` option). */
export interface ContentOptions {
  /**
   * The most bytes of media one stored result keeps inline (decoded, all its parts together).
   * Parts past it go to `store` by reference, or, without a store, are replaced by a text part
   * saying what was left out. Default 1 MiB (1 048 576).
   */
  maxInlineBytes?: number;
  /** Where media past `maxInlineBytes` are kept. Default: none (they are described in words). */
  store?: ContentStore;
}

/** The default of {@link ContentOptions.maxInlineBytes}: 1 MiB. */
export const DEFAULT_MAX_INLINE_BYTES = 1024 * 1024;

const REF = /^[\w.:/-]{1,200}$/;

/**
 * The bound for stored results, in one place: the coordinator applies it to every outcome it
 * stores, the runner to every result it feeds into a transcript, and the runner loads what
 * it put by reference before each model call.
 */
export class ContentBound {
  readonly maxInlineBytes: number;
  private readonly store?: ContentStore;

  constructor(options: ContentOptions = {}) {
    const max = options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES;
    if (!Number.isSafeInteger(max) || max < 0)
      throw new InvalidArgumentError('content.maxInlineBytes must be a whole number of bytes, 0 or more');
    const store = options.store;
    if (store !== undefined && (typeof store?.put !== 'function' || typeof store.get !== 'function'))
      throw new InvalidArgumentError('content.store must be a ContentStore { put(bytes, mimeType), get(ref) }');
    this.maxInlineBytes = max;
    if (store) this.store = store;
  }

  /**
   * `result` as a store keeps it: its inline media up to the bound, in order; each part past
   * it by reference (with a store) or as a text part saying what was left out. A result
   * within the bound is returned as it is.
   */
  async keep(result: ToolResult): Promise<ToolResult> {
    const content = contentOf(result);
    if (!content || inlineBytes(content) <= this.maxInlineBytes) return result;
    const kept: ToolContent[] = [];
    let total = 0;
    for (const part of content) {
      const size = partBytes(part);
      if (size === 0 || total + size <= this.maxInlineBytes) {
        total += size;
        kept.push(part);
      } else {
        kept.push(await this.moved(part, size));
      }
    }
    return replaceContent(result, kept);
  }

  /**
   * A media part kept by reference, with its bytes back as base64 `data`; any other part as
   * it is. A reference the store no longer has (or no store) is returned unchanged: the
   * providers describe it in words.
   */
  async load<T extends ToolContent>(part: T): Promise<T> {
    if (!isMedia(part) || !('ref' in part) || !this.store) return part;
    const bytes = await this.store.get(part.ref);
    if (!bytes) return part;
    const { ref: _ref, size: _size, ...rest } = part;
    return { ...rest, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') } as T;
  }

  private async moved(part: ToolContent, size: number): Promise<ToolContent> {
    const inline = inlineOf(part);
    if (!inline) return part;
    let why = 'no content store was given';
    if (this.store) {
      // Never thrown: a settle that failed here would leave its call claimed, to be replayed again.
      const ref = await this.store.put(Buffer.from(inline.data, 'base64'), inline.mimeType).catch(() => undefined);
      if (typeof ref === 'string' && REF.test(ref)) {
        const moved = { type: inline.type, mimeType: inline.mimeType, ref, size };
        return inline.filename === undefined ? moved : { ...moved, filename: inline.filename };
      }
      why = 'the content store did not keep it';
    }
    const name = inline.filename === undefined ? '' : ` ${inline.filename}`;
    return {
      type: 'text',
      text: `[${inline.type}${name} (${inline.mimeType}, ${size} bytes) left out: stored results keep at most ${this.maxInlineBytes} bytes of media inline, and ${why}]`,
    };
  }
}

function inlineBytes(content: readonly ToolContent[]): number {
  let total = 0;
  for (const part of content) total += partBytes(part);
  return total;
}

function partBytes(part: ToolContent): number {
  const inline = inlineOf(part);
  return inline ? base64Bytes(inline.data) : 0;
}

/** A part's inline bytes as media: a media part's `data`, or an embedded resource's `blob` (as a file). */
function inlineOf(part: ToolContent): { type: 'image' | 'audio' | 'file'; mimeType: string; filename?: string; data: string } | undefined {
  if (isMedia(part)) return 'data' in part ? part : undefined;
  if (part.type === 'resource' && 'blob' in part.resource) {
    const { uri, mimeType, blob } = part.resource;
    return { type: 'file', mimeType: mimeType ?? 'application/octet-stream', filename: uri, data: blob };
  }
  return undefined;
}

/** A content-addressed reference: the same bytes are kept once. */
export function contentRef(bytes: Uint8Array): string {
  return `sha256-${createHash('sha256').update(bytes).digest('hex')}`;
}
