/**
 * `toolnexus-ts/a2a`: the Agent2Agent protocol (docs/a2a.md), over the official `@a2a-js/sdk`
 * (an optional peer). A remote A2A agent as a tool: its `input-required` is a durable
 * suspension, answered on the same task, exactly once.
 */
export { a2aAgentTool } from './client/tool';
export type { A2ATaskRef } from './client/tool';
export type { A2AAgentToolOptions, A2AEnvironment } from './client/options';
export { A2AAgentError } from './client/errors';
