import { mapLimited } from '../../timing/limiter';
import { InvalidArgumentError, type RunConflictError } from '../../errors';
import { pendingOf } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import type { ToolCall } from '../../models/types';
import { recoveryRequest, replaysOnTakeover } from '../../suspension/takeover';
import { callTool, type TurnCalls } from '../core/calls';
import { DriverLease } from '../core/lease';
import { snapshot, type AgentParts, type LiveRun } from '../core/live-run';
import { nextStepOf, type NextStep } from '../core/next-step';
import type { RunDriver, RunState, RunStep, StepCall } from '../core/state';

export type { Durability } from '../core/types';

/**
 * Durable steps (`durability: 'step'`): the run is written when it starts, after every model
 * response and around every tool call, under the driver lease, so a run whose process died
 * is continued from its last step (docs/agents.md, "Durable steps"). Every write is the
 * lease's: a renewal writes the run as it stands too.
 */
export class DurableSteps implements TurnCalls {
  readonly lease: DriverLease;
  /** The turn whose calls are running, each with its result once it is in. */
  private step: RunStep | undefined;

  constructor(
    private readonly live: LiveRun,
    parts: AgentParts,
    driverId: string,
  ) {
    this.lease = new DriverLease(parts.checkpoints, live, driverId, (driver) => this.state(driver));
  }

  /** The response is recorded before any call runs: a recovery never asks the model for it again. */
  record(turn: number, calls: readonly ToolCall[]): Promise<void> {
    this.step = { turn, calls: calls.map((call) => ({ call })) };
    return this.lease.write();
  }

  /** Runs the turn's calls in parallel, recording each result as it comes in, and that a call that is not idempotent started. */
  async run(parts: AgentParts, live: LiveRun): Promise<ToolResult[]> {
    const step = this.step as RunStep;
    const results = await mapLimited(step.calls, parts.maxParallelTools, (entry) => this.call(parts, live, entry));
    this.step = undefined;
    return results;
  }

  /**
   * Finishes the step a dead driver left: a recorded result is kept, a call that never started
   * runs, a started call without a result runs again only if its tool is idempotent, and is
   * otherwise put to an operator as a `recovery` suspension (approve: it runs; decline: the
   * model is told it was refused). The run halts when some call is now suspended.
   */
  async finish(parts: AgentParts, live: LiveRun, left: RunStep): Promise<NextStep> {
    const step: RunStep = { turn: left.turn, calls: left.calls.map((entry) => ({ ...entry })) };
    this.step = step;
    const results = await mapLimited(step.calls, parts.maxParallelTools, async (entry): Promise<ToolResult> => {
      if (entry.result) {
        if (entry.stop) live.stop ??= entry.stop;
        return entry.result;
      }
      if (!entry.started || idempotent(parts, entry.call.name)) return this.call(parts, live, entry);
      return this.askOperator(parts, live, step.turn, entry);
    });
    this.step = undefined;
    return nextStepOf(
      parts,
      live,
      step.calls.map((entry) => entry.call),
      results,
      step.turn,
    );
  }

  private state(driver: RunDriver): RunState {
    const state = snapshot(this.live, 'running', undefined);
    state.driver = driver;
    if (this.step) state.step = this.step;
    return state;
  }

  private async call(parts: AgentParts, live: LiveRun, entry: StepCall): Promise<ToolResult> {
    if (!idempotent(parts, entry.call.name)) {
      entry.started = true;
      await this.lease.write();
    }
    // A refusal's stop is recorded with the call, so a recovery of this step stops the run too.
    const result = await callTool(parts, live, entry.call, (stop) => (entry.stop = stop));
    entry.result = result;
    await this.lease.write();
    return result;
  }

  /** A started call without a result whose tool is not idempotent: an operator decides whether it runs again. */
  private async askOperator(parts: AgentParts, live: LiveRun, turn: number, entry: StepCall): Promise<ToolResult> {
    let asked: ToolResult;
    try {
      asked = await parts.coordinator.suspend(
        entry.call.name,
        entry.call.arguments,
        recoveryRequest({ tool: entry.call.name, callId: entry.call.id, runId: live.runId, turn }),
        { callId: entry.call.id, runId: live.runId, principal: live.principal },
      );
    } catch (error) {
      // Arguments that do not parse never ran the tool: running the call again only repeats its error result.
      if (error instanceof InvalidArgumentError) return this.call(parts, live, entry);
      throw error;
    }
    entry.result = asked;
    const request = pendingOf(asked);
    if (request) live.emit?.({ type: 'pending', callId: entry.call.id, request });
    await this.lease.write();
    return asked;
  }
}

/**
 * Starts durable steps for the live run, which this process now drives as `driverId`: the
 * first write (a new run's version 1, so a runId taken already is a {@link RunConflictError}),
 * then the lease's renewals, which tell `onLost` of a takeover.
 */
export async function startSteps(
  parts: AgentParts,
  live: LiveRun,
  driverId: string,
  onLost: (error: RunConflictError) => void,
): Promise<DurableSteps> {
  const steps = new DurableSteps(live, parts, driverId);
  live.lease = steps.lease;
  await steps.lease.write();
  steps.lease.renew(onLost);
  return steps;
}

/**
 * The takeover rule (docs/suspension.md), as every door applies it to a lapsed claim: true
 * when the tool declares that running a call again has no further effect (or it cannot run
 * at all here: an unknown tool's call only repeats its error result).
 */
function idempotent(parts: AgentParts, name: string): boolean {
  const { toolkit } = parts.coordinator;
  return !toolkit.has(name) || replaysOnTakeover(toolkit, name);
}
