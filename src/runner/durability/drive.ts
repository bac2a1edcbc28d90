import { RunConflictError } from '../../errors';
import { AbortLatch, onAbortOf } from '../../timing/abort-latch';
import type { Audit } from '../../suspension/audit';
import type { RunTrace } from '../core/agent-spans';
import { PLAIN_CALLS, type TurnCalls } from '../core/calls';
import { startSteps } from './durable';
import { DriverLease } from '../core/lease';
import { whileDriving, type AgentParts, type Emit, type LiveRun } from '../core/live-run';
import { runLoop } from '../core/loop';
import { AGAIN, fedChecked, type NextStep } from '../core/next-step';
import { offeredTools, resumeOutput } from '../core/output';
import type { RunState } from '../core/state';
import { SteerQueue } from '../core/steer';
import type { RunResult } from '../core/types';

/** Options of a resume, continue or recover (the host's context again: it is never stored). */
export interface ContinueOptions {
  signal?: AbortSignal;
  context?: object;
  /** The typed answer's DTO class, when the run asks for one (checked against the checkpoint's name). */
  output?: unknown;
  /** Who answered and why, recorded with each answer this resume applies. */
  audit?: Audit;
  /** This resume's span, when a tracer records it (set here, not by callers). */
  trace?: RunTrace;
}

/**
 * Drives a new run: its calls run plainly, or, with durable steps, recorded from its first
 * write on under this process's driver lease (a lost lease aborts the run's signal).
 */
export async function driveNew(parts: AgentParts, live: LiveRun): Promise<RunResult> {
  const before = parts.features.beforeRun(live);
  const stop = before ? await before : undefined;
  if (stop) return runLoop(parts, live, PLAIN_CALLS, { type: 'stop', stop });
  return parts.durability === 'step' ? driveSteps(parts, live) : runLoop(parts, live, PLAIN_CALLS);
}

async function driveSteps(parts: AgentParts, live: LiveRun): Promise<RunResult> {
  // A lost lease aborts the run's latch (the run has its signal: durable steps arm it).
  const steps = await startSteps(parts, live, parts.checkpoints.driver().id, (error) => live.latch.abort(error));
  return runLoop(parts, live, steps);
}

/** Becomes the run's driver (compare-and-set on the version) and continues the loop from the checkpoint. */
export async function takeOver(
  parts: AgentParts,
  runId: string,
  state: RunState,
  version: number,
  options: ContinueOptions,
  emit: Emit | undefined,
): Promise<RunResult> {
  const running: RunState = { ...state, phase: 'running', driver: parts.checkpoints.driver() };
  delete running.error;
  if (!(await parts.checkpoints.write(runId, version + 1, running)))
    throw new RunConflictError(runId, 'another process took it over first');
  return drive(parts, runId, running, version + 1, options, emit);
}

/**
 * Drives a `running` checkpoint (this process wrote it so) under its driver lease: the halted
 * turn's results are fed back, or the step a dead driver left is finished, and the loop goes on.
 */
export async function drive(
  parts: AgentParts,
  runId: string,
  running: RunState,
  version: number,
  options: ContinueOptions,
  emit: Emit | undefined,
): Promise<RunResult> {
  const output = resumeOutput(runId, running.output, options.output, parts.model, parts.tools());
  // Registered with the runner while it drives, so `cancel` aborts it here and `steer` queues with it.
  const taken = new AbortLatch();
  const steering = new SteerQueue(running.steering);
  const live: LiveRun = {
    runId,
    messages: running.messages,
    toolCalls: running.toolCalls,
    turns: running.turns,
    usage: running.usage,
    turnUsage: running.turnUsage ?? [],
    text: running.text,
    output,
    version,
    tools: offeredTools(parts.tools(), output),
    latch: taken,
    // A run driven from its checkpoint can be cancelled by anyone with the store: it has its signal.
    signal: taken.signal,
    context: options.context,
    emit,
    steering,
  };
  if (running.agent !== undefined) live.agent = running.agent;
  if (running.principal !== undefined) live.principal = running.principal;
  if (running.session !== undefined) live.session = running.session;
  // The guardrails' records are the run's, kept whether or not this runner has guardrails.
  if (running.guardrails) {
    live.guardrails = running.guardrails.records;
    live.feedbacks = running.guardrails.feedbacks;
  }
  parts.features.start(live, running);
  if (options.trace) live.trace = options.trace;
  return whileDriving(parts.driving, runId, taken, driveLive(parts, live, running, options.signal), running.principal, steering);
}

/** Drives `live`, just made from its `running` checkpoint, under its driver lease; `follow`, the caller's signal, aborts its latch meanwhile. */
async function driveLive(parts: AgentParts, live: LiveRun, running: RunState, follow: AbortSignal | undefined): Promise<RunResult> {
  const taken = live.latch;
  const unfollow = follow ? onAbortOf(follow, (reason) => taken.abort(reason)) : undefined;
  const driverId = running.driver?.id ?? parts.checkpoints.driver().id;
  const lost = (error: RunConflictError) => taken.abort(error);
  // With durable steps (or a checkpoint written with them) each step's write renews the lease;
  // without, the renewals write the checkpoint as it is now (a copy: the loop appends to the transcript).
  const journaled = parts.durability === 'step' || running.step !== undefined;
  if (!journaled) {
    const saved = JSON.parse(JSON.stringify(running)) as RunState;
    // Messages steered in since are kept with it (taken or not: the saved transcript has none of them).
    live.lease = new DriverLease(parts.checkpoints, live, driverId, (driver) => {
      const steered = live.steering?.all();
      return steered ? { ...saved, driver, steering: steered } : { ...saved, driver };
    });
    live.lease.renew(lost);
  }
  const halted = running.halted;
  try {
    let next: NextStep = halted
      ? await fedChecked(
          parts,
          live,
          halted.calls.map((entry) => entry.call),
          halted.calls.map((entry) => entry.result),
          halted.turn,
          halted.calls.map((entry) => entry.refusal),
        )
      : AGAIN;
    let calls: TurnCalls = PLAIN_CALLS;
    if (journaled) {
      const steps = await startSteps(parts, live, driverId, lost);
      calls = steps;
      if (running.step) next = await steps.finish(parts, live, running.step);
    }
    return await runLoop(parts, live, calls, next);
  } finally {
    await live.lease?.stop();
    unfollow?.();
  }
}
