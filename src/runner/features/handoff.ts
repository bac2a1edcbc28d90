import { sanitizeName } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import { defineTool, type FunctionTool } from '../../toolkit/define-tool';

/** Options of {@link AgentRunner.handoffTo}. */
export interface HandoffOptions {
  /** The tool's name. Default `transfer_to_<agent>`. */
  toolName?: string;
  /** What the calling model is told the agent does. Default: "Hands the conversation to <agent>." */
  description?: string;
}

/**
 * The tool a model calls to hand the conversation to agent `agent`: its result says so,
 * and carries `metadata.handoff` that the loop reads to continue with that agent's model,
 * instructions and tools. The call and its result stay in the transcript: the handoff is recorded there.
 */
export function handoffTool(agent: string, options: HandoffOptions = {}): FunctionTool {
  return defineTool({
    name: options.toolName ?? sanitizeName(`transfer_to_${agent}`),
    description: options.description ?? `Hands the conversation to ${agent}.`,
    inputSchema: { type: 'object', properties: {} },
    idempotent: true,
    run: (): ToolResult => ({ output: `Transferred to ${agent}.`, isError: false, metadata: { handoff: agent } }),
  });
}

/** The agent a handoff call's result moves the conversation to, when it is one. */
export function handoffOf(result: ToolResult): string | undefined {
  const to = result.metadata?.handoff;
  return typeof to === 'string' && !result.isError ? to : undefined;
}
