export { AgentRunner } from './agent-runner';
export type { AgentRunnerOptions, RunOptions, ResumeOptions, AgentToolContext } from './agent-runner';
export type { OrphanRecovery } from './agent-runner';
export type { Durability } from './durable';
export type { HandoffOptions } from './handoff';
export { SubAgentInput, SubAgentTool } from './sub-agent';
export type { SubAgentToolOptions, SubAgentRecord, SubAgentOrigin } from './sub-agent';
export { answerAs } from './answer-as';
export type { AnswerAsOptions, Answered, AnsweredRun } from './answer-as';
export { OpenAIChatModel } from '../models/openai';
export type { OpenAIChatModelOptions } from '../models/openai';
export { AnthropicModel } from '../models/anthropic';
export type { AnthropicModelOptions, AnthropicThinking, AnthropicPromptCache } from '../models/anthropic';
export { FunctionModel } from '../models/function';
export type { FunctionModelReply, FunctionToolCall, ModelFunction } from '../models/function';
export type { HttpModelOptions, RetryOptions } from '../http';
export { RUN_STATE_FORMAT } from './state';
export { redactRun } from './redact-run';
export type { RunState, RunPhase, HaltedCall, RunDriver } from './state';
export type { RunStep, StepCall } from './state';
export { OpenAIResponsesModel } from '../models/openai-responses';
export type { OpenAIResponsesModelOptions } from '../models/openai-responses';
export { GeminiModel } from '../models/gemini';
export type { GeminiModelOptions } from '../models/gemini';
export type {
  ToolCallRecord,
  ToolCallStatus,
  ModelMetricEvent,
  RunEvent,
  RunResult,
  RunResultBase,
  DoneRunResult,
  PendingRunResult,
  HaltedRunResult,
  IncompleteRunResult,
  RunStatus,
} from './types';
export type { ChatModel, ChatMessage, UserMessage, AssistantMessage, ToolMessage, ToolCall, ModelRequest, ModelResponse, ModelStreamEvent, ProviderItem, OutputFormat, ModelTool, Usage } from '../models/types';
