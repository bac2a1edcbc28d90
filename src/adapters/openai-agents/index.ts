/**
 * The `toolnexus-ts/openai-agents` entry: a Toolkit's tools for the OpenAI Agents SDK
 * (`@openai/agents`, an optional peer), declared approvals as its `needsApproval` and
 * interruptions approved through `RunState` executed exactly once (docs/interop.md).
 *
 * Loading this entry without `@openai/agents` installed throws a `MissingPeerError` that
 * names `npm install @openai/agents`.
 */
import 'reflect-metadata';
import { agents } from './peer';

agents();

export { approveInterruption, openAIAgentsTools, recordRejection } from './tools';
export type { ApprovingState, OpenAIAgentsApproveOptions, OpenAIAgentsTool, OpenAIAgentsToolsOptions } from './tools';
