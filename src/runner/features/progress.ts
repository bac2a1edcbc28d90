import type { AgentParts } from '../core/live-run';
import { ProgressReporter } from './progress-pace';
import type { RunFeature } from '../core/feature';

/**
 * Progress as a feature: a call of a run someone listens to gets `ctx.progress`, whose updates
 * become `progress` events (a host's own `progress`, an MCP client's, is kept); a held update
 * goes out before the call's result, none after it.
 */
export function progressFeature(parts: Pick<AgentParts, 'clock' | 'telemetry'>): RunFeature {
  return {
    name: 'progress',
    toolContext(live, call, ctx) {
      const emit = live.emit;
      if (!emit || ctx.progress !== undefined) return undefined;
      const progress = new ProgressReporter(call.id, call.name, emit, parts.clock, parts.telemetry);
      ctx.progress = progress.report;
      return () => progress.close();
    },
  };
}
