import type { ResumeCoordinator } from '../../suspension/coordinator';

/** One tool as `tools/list` shows it, in both eras. */
export interface McpToolListing {
  name: string;
  description: string;
  inputSchema: { type: 'object' };
  title?: string;
  annotations?: Record<string, unknown>;
  outputSchema?: { type: 'object' };
}

/** The coordinator's tools as `tools/list` lists them: each tool's schema inline, its title, hints and output schema. */
export function toolListing(coordinator: ResumeCoordinator): McpToolListing[] {
  return coordinator.toolkit.tools().map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as { type: 'object' },
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.annotations !== undefined ? { annotations: { ...tool.annotations } } : {}),
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema as { type: 'object' } } : {}),
  }));
}
