/**
 * `toolnexus-ts/chat`: a chat back end for the AI SDK's `useChat` (docs/chat.md). It speaks
 * the UI message stream protocol (JSON over server-sent events) itself: no `ai` package is
 * needed at run time.
 */
export { chatStream, chatResponse, chatHandler, chatFastifyHandler, sseOf, CHAT_REFUSED_HEADER } from './handler';
export type {
  ChatOptions,
  ChatResponseOptions,
  ChatHandlerOptions,
  ChatFastifyOptions,
  FastifyLikeRequest,
  FastifyLikeReply,
} from './handler';
export type { ChatLogger } from './log';
export { CHAT_STREAM_HEADER } from './reconnect';
export type { ChatStreamLogOptions } from './stream-log';
export { chatThread, chatThreadResponse, chatThreadHandler } from './thread';
export type { ChatUIMessage, ChatUIPart, ChatToolUIPart } from './thread';
export { toUIMessageStream, uiPartBatches, UIPartWriter, messageIdOf } from './ui-stream';
export type { UIStreamOptions } from './ui-stream';
export { UI_STREAM_HEADERS } from './parts';
export type {
  UIStreamPart,
  ChatRequestData,
  ChatSubAgentData,
  ChatApprovalData,
  ChatApprovalAction,
  ChatProgressData,
  ChatStopData,
  ChatSteerData,
} from './parts';
export { ChatRequestError } from './errors';
export type { ChatRefusalDetails } from './errors';
