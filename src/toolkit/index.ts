export { Toolkit, defaultToolName, toResult } from './toolkit';
export type { ToolkitOptions, ToolResolver, Registrable, RegisteredTool } from './toolkit';
export { answerFor } from './context';
export type { ToolContext, ReplayInfo } from './context';
export { defineTool, isFunctionTool } from './define-tool';
export type { FunctionTool, DtoFunctionToolSpec, SchemaFunctionToolSpec } from './define-tool';
export type { ToolkitHooks, BeforeToolEvent, AfterToolEvent, ToolMetricEvent } from './hooks';
export type { OpenAITool, AnthropicTool, GeminiTools } from './adapters';
export { REDACTED } from './redaction';
