import type { ResumeCoordinator } from '../../suspension/coordinator';
import { cardToolListings, cardToolMeta } from './approval-card';

/** One tool as `tools/list` shows it, in both eras. */
export interface McpToolListing {
  name: string;
  description: string;
  inputSchema: { type: 'object' };
  title?: string;
  annotations?: Record<string, unknown>;
  outputSchema?: { type: 'object' };
  _meta?: Record<string, unknown>;
}

/**
 * The coordinator's tools as `tools/list` lists them: each tool's schema inline, its title, hints
 * and output schema; with the approval card, a tool that declares an approval names the card and
 * the card's app-only tools follow.
 */
export function toolListing(coordinator: ResumeCoordinator, card = false): McpToolListing[] {
  const tools: McpToolListing[] = coordinator.toolkit.tools().map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as { type: 'object' },
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.annotations !== undefined ? { annotations: { ...tool.annotations } } : {}),
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema as { type: 'object' } } : {}),
    ...(card && tool.approval !== undefined ? { _meta: cardToolMeta() } : {}),
  }));
  return card ? [...tools, ...cardToolListings()] : tools;
}

/** The `notifications/progress` a call sends, in both eras. */
export interface McpProgressNotification {
  method: 'notifications/progress';
  params: { progressToken: string | number; progress: number; total?: number; message?: string };
}

/**
 * `ctx.progress` for a call whose request carried `token` (none without one): each report is
 * sent through `send`, the era's way to notify the caller; a failed send is dropped.
 */
export function progressFor(
  token: string | number | undefined,
  send: (notification: McpProgressNotification) => Promise<void>,
): ((progress: number, total?: number, message?: string) => void) | undefined {
  if (token === undefined) return undefined;
  return (progress, total, message) => {
    const params = {
      progressToken: token,
      progress,
      ...(total !== undefined ? { total } : {}),
      ...(message !== undefined ? { message } : {}),
    };
    send({ method: 'notifications/progress', params }).catch(() => undefined);
  };
}
