import { endRun, startRun, type RunTrace } from './agent-spans';
import type { Telemetry } from '../../telemetry/telemetry';
import { showCalls } from '../../toolkit/redaction';
import type { RunResult } from './types';
import type { ChatModel } from '../../models/types';
import type { ResumeCoordinator } from '../../suspension/coordinator';

/** What a run's span needs from its runner. */
export interface TraceParts {
  telemetry: Telemetry;
  /** The runner's name: the span's agent unless `telemetry.agentName` says otherwise. */
  agent?: string;
  model: ChatModel;
  coordinator: ResumeCoordinator;
}

/**
 * The span of a run or of one resume, or `undefined` when nothing records (then the loop
 * takes the path it took before tracing existed). `halted` is the stored `traceparent` of the
 * run's span that halted, which a resume links to; `session`, the session the run belongs to
 * (a chat's), names the conversation, else the run id does.
 */
export function openTrace(parts: TraceParts, runId: string, halted?: string, session?: string): RunTrace | undefined {
  const tracing = parts.telemetry.active();
  if (!tracing) return undefined;
  const { toolkit } = parts.coordinator;
  return startRun(tracing, {
    agent: parts.telemetry.agentNameOr(parts.agent),
    conversationId: session ?? runId,
    provider: parts.model.provider,
    model: parts.model.model,
    show: (calls) => showCalls((name, args) => toolkit.redact(name, args), calls),
    halted,
  });
}

/** Runs `drive` inside the run's span, and ends the span with how it went. */
export async function traced(trace: RunTrace | undefined, drive: () => Promise<RunResult>): Promise<RunResult> {
  if (!trace) return drive();
  let result: RunResult;
  try {
    result = await trace.tracing.within(trace.context, drive);
  } catch (error) {
    endRun(trace, { error });
    throw error;
  }
  endRun(trace, result);
  return result;
}
