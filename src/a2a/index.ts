/**
 * `toolnexus-ts/a2a`: the Agent2Agent protocol both ways, over the official `@a2a-js/sdk`
 * (an optional peer). Serving an `AgentRunner` as an A2A agent: a run that waits for an answer
 * is a task in `input-required`, answered on the task, durably and exactly once. A remote A2A
 * agent as a tool: its `input-required` is a durable suspension, answered on the same task,
 * exactly once (docs/a2a.md).
 *
 * Loading this entry without `@a2a-js/sdk` installed throws a `MissingPeerError` that names
 * `npm install @a2a-js/sdk`.
 */
import { a2aSdk } from './server/peer';

a2aSdk();

export { a2aHandler, a2aFastifyHandler } from './server/http';
export type { A2ANodeHandler, A2AFastifyRequest, A2AFastifyReply } from './server/http';
export type { A2AServeOptions, A2ACardOptions, A2ASkill, A2AAuthenticate, A2ALogger } from './server/options';
export type { A2APushOptions } from './server/options';
export { isPrivateAddress } from './server/push-target';
export type { A2ARequestData } from './server/parts';
export { agentCardOf } from './server/card';
export type { A2ALegacyCardFields } from './server/card';
export { A2ARequestError } from './server/errors';
export type { A2ARefusal } from './server/errors';
export { a2aAgentTool } from './client/tool';
export type { A2ATaskRef } from './client/tool';
export type { A2AAgentToolOptions, A2AEnvironment } from './client/options';
export { A2AAgentError } from './client/errors';
export { a2aPushReceiver } from './client/push';
export type { A2APushReceiver, A2APushReceiverOptions, A2APushWatch } from './client/push';
export type { A2ATaskRecord, A2ATaskStore, A2ATaskPage } from '../stores/a2a-tasks';
