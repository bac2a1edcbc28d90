/**
 * The `toolnexus-ts/ai-sdk` entry: the Vercel AI SDK (`ai` 7, an optional peer) in both
 * directions (docs/interop.md). {@link aiSdkTools} gives a Toolkit's tools to `generateText`,
 * `streamText` and `ToolLoopAgent`, declared approvals and suspensions durable and exactly
 * once; {@link AiSdkModel} lets the `AgentRunner` drive any `@ai-sdk/*` provider's model.
 *
 * Loading this entry without `ai` installed throws a {@link MissingPeerError} that names
 * `npm install ai`.
 */
import 'reflect-metadata';
import { ai } from './peer';

ai();

export { aiSdkTools, withOutcomes, recordDeclines, alwaysApprove, AI_SDK_RUN_PREFIX } from './tools';
export type {
  AiSdkAlwaysApproveOptions,
  AiSdkTool,
  AiSdkToolOutput,
  AiSdkToolsOptions,
  ContentToolOutput,
  SuspendedToolOutput,
} from './tools';
export { aiSdkToolApproval } from './tools';
export type { AiSdkApprovalFunction, AiSdkToolApproval } from './tools';
export { AiSdkModel, AI_SDK_CONTENT_ITEM } from './model';
export type { AiSdkModelOptions, AiSdkLanguageModel } from './model';
