import { toolOptionsOf } from '../decorators/tool.decorator';
import type { AnyClass } from '../decorators/types';
import type { ToolResult } from '../results/wire';
import { defaultToolName } from '../toolkit/toolkit';
import type { AgentRunner } from './agent-runner';
import { runSubAgent } from './core/child-run';
import type { AgentToolContext } from './core/live-run';

export { SubAgentInput } from './core/child-run';
export type { SubAgentOrigin, SubAgentRecord, SubAgentToolOptions } from './core/child-run';

/**
 * A `@Tool` class that is a sub-agent: extend it, give it a runner (by constructor: a DI
 * container can inject one), and declare `@Tool({ name, description, args })` as for any tool.
 *
 * @example
 * ```ts
 * @Tool({ name: 'research', description: 'Researches a question', args: SubAgentInput })
 * class ResearchTool extends SubAgentTool {
 *   constructor(runner: AgentRunner) { super(runner) }
 * }
 * ```
 */
export abstract class SubAgentTool {
  constructor(protected readonly runner: AgentRunner) {}

  run(args: object, ctx?: AgentToolContext): Promise<ToolResult> {
    const type = this.constructor as AnyClass;
    return runSubAgent(this.runner, toolOptionsOf(type)?.name ?? defaultToolName(type.name), args, ctx);
  }
}
