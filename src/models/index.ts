/**
 * The models entry, `toolnexus-ts/models`: the chat models an `AgentRunner` drives (one per
 * provider wire format, plus a function-backed one for tests and local logic) and the
 * provider-neutral types a model of your own implements.
 */
export { OpenAIChatModel } from './openai';
export type { OpenAIChatModelOptions } from './openai';
export { OpenAIResponsesModel } from './openai-responses';
export type { OpenAIResponsesModelOptions } from './openai-responses';
export { AnthropicModel } from './anthropic';
export type { AnthropicModelOptions, AnthropicThinking, AnthropicPromptCache } from './anthropic';
export { GeminiModel } from './gemini';
export type { GeminiModelOptions } from './gemini';
export { FunctionModel } from './function';
export type { FunctionModelReply, FunctionToolCall, ModelFunction } from './function';
export type { HttpModelOptions, RetryOptions } from '../http';
export type {
  ChatModel,
  ChatMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
  ToolMedia,
  ToolCall,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  ProviderItem,
  OutputFormat,
  ModelTool,
  Usage,
} from './types';
export {
  ModelError,
  ModelHttpError,
  ModelTimeoutError,
  ModelConnectionError,
  ModelResponseError,
  ModelResponseTooLargeError,
  ModelRedirectError,
  ModelRequestError,
} from '../errors';
