import { contentOf, isMedia } from '../../results/content';
import type { ToolResult } from '../../results/wire';
import type { ContentBound } from '../../suspension/content';
import type { ChatMessage, ToolCall, ToolMedia, ToolMessage } from '../../models/types';

/** The transcript's entry for `call`'s result: its output, and the media its content shows the model. */
export function toolMessage(call: Pick<ToolCall, 'id' | 'name'>, result: ToolResult): ToolMessage {
  const message: ToolMessage = { role: 'tool', callId: call.id, name: call.name, content: result.output, isError: result.isError };
  const media = mediaOf(result);
  if (media) message.media = media;
  return message;
}

/**
 * The media of a result's content: its images, recordings and files, and each embedded
 * resource's `blob` as a file (named by its URI). Text parts are left to `output`, which the
 * model reads already.
 */
export function mediaOf(result: ToolResult): ToolMedia[] | undefined {
  const content = result.metadata === undefined ? undefined : contentOf(result);
  if (!content) return undefined;
  const media: ToolMedia[] = [];
  for (const part of content) {
    if (isMedia(part)) media.push(part);
    else if (part.type === 'resource' && 'blob' in part.resource)
      media.push({
        type: 'file',
        mimeType: part.resource.mimeType ?? 'application/octet-stream',
        filename: part.resource.uri,
        data: part.resource.blob,
      });
  }
  return media.length > 0 ? media : undefined;
}

/**
 * The transcript with the media kept by reference loaded back (the model is shown the bytes),
 * or `messages` itself when none is: the usual transcript costs one pass and no copy.
 */
export function withLoadedMedia(
  bound: ContentBound,
  messages: readonly ChatMessage[],
): readonly ChatMessage[] | Promise<readonly ChatMessage[]> {
  // No promise when nothing is to be loaded (the usual transcript): the caller awaits only a load.
  if (!messages.some(hasRef)) return messages;
  return Promise.all(
    messages.map(async (message) =>
      hasRef(message) ? { ...message, media: await Promise.all((message.media ?? []).map((part) => bound.load(part))) } : message,
    ),
  );
}

function hasRef(message: ChatMessage): message is ToolMessage {
  return message.role === 'tool' && message.media !== undefined && message.media.some((part) => 'ref' in part);
}
