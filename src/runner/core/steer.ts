import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, RunConflictError, RunNotFoundError } from '../../errors';
import type { Audit } from '../../suspension/audit';
import { judgeCancel, type CancelledRun, type CancelTarget } from './cancel';
import type { Driving } from './live-run';
import { isEnded, type RunState, type SteerMessage } from './state';

export type { SteerMessage } from './state';

/** Who steers, and the message's id. */
export interface SteerOptions {
  /** The message's id (default: a new one). A steer with an id the run holds already is not queued twice. */
  id?: string;
  /** Who steers: judged as a cancel is (docs/agents.md, "Steering"). Without it, the host's own steer is not judged. */
  audit?: Audit;
}

/**
 * Where a steer went: the run this process drives (`driven`), its checkpoint (`stored`, a
 * halted or failed run), or the run store's queue for the process that drives it (`elsewhere`).
 */
export interface SteerReceipt {
  runId: string;
  id: string;
  queued: 'driven' | 'stored' | 'elsewhere';
}

/** The longest message a steer takes, in characters. */
export const MAX_STEER_CHARS = 100_000;
/** The longest id a steer takes, in characters. */
export const MAX_STEER_ID_CHARS = 200;
/** The most messages a run holds queued at once. */
export const MAX_QUEUED_STEERS = 100;
/** How many times a steer reads the checkpoint again when a writer beat it. */
const MAX_ATTEMPTS = 20;

/**
 * The messages steered into a run this process drives, like its latch one per driver: what the
 * steering feature takes at each turn's start. `held` is every message the driver holds since
 * the checkpoint it started from (taken or not), for a lease that rewrites that checkpoint.
 */
export class SteerQueue {
  private waiting: SteerMessage[];
  private readonly held: SteerMessage[];
  private closed = false;
  /** Writes the run's checkpoint with the queue, when it has one (a durable run's lease). */
  persist: (() => Promise<void> | undefined) | undefined;

  constructor(kept: readonly SteerMessage[] | undefined) {
    this.waiting = kept ? kept.map((message) => ({ ...message })) : [];
    this.held = this.waiting.slice();
  }

  /** How many wait for the next turn. */
  get size(): number {
    return this.waiting.length;
  }

  /** Whether the run's loop still takes messages (it closes when the loop is left). */
  get open(): boolean {
    return !this.closed;
  }

  /**
   * Holds a message another process queued in the run store (the store bounds how many): false
   * when it is held already (taken, or kept from the checkpoint) or the loop no longer takes any.
   */
  adopt(message: SteerMessage): boolean {
    if (this.closed || this.held.some((held) => held.id === message.id)) return false;
    this.waiting.push(message);
    this.held.push(message);
    return true;
  }

  /** Queues `message`; false when the loop no longer takes any. A message whose id is held already is not queued again. */
  push(message: SteerMessage): boolean {
    if (this.closed) return false;
    if (this.held.some((held) => held.id === message.id)) return true;
    if (this.waiting.length >= MAX_QUEUED_STEERS) throw full(message.id);
    this.waiting.push(message);
    this.held.push(message);
    return true;
  }

  /** The waiting messages, now taken by a turn. */
  take(): SteerMessage[] {
    const taken = this.waiting;
    this.waiting = [];
    return taken;
  }

  /** The loop is left: what arrives now goes to the run's checkpoint, once the run ended. */
  close(): void {
    this.closed = true;
  }

  /** The messages not yet taken, for a snapshot of the live run (the taken ones are in its transcript). */
  untaken(): SteerMessage[] | undefined {
    return this.waiting.length > 0 ? this.waiting.slice() : undefined;
  }

  /** Every message held since the checkpoint the driver started from, for a lease rewriting that checkpoint. */
  all(): SteerMessage[] | undefined {
    return this.held.length > 0 ? this.held.slice() : undefined;
  }
}

function full(id: string): InvalidArgumentError {
  return new InvalidArgumentError(`steer ${id}: the run holds ${MAX_QUEUED_STEERS} queued messages already`);
}

/** What steering a run needs: its checkpoints and coordinator (to judge who steers), and the runs driven here. */
export type SteerTarget = CancelTarget & { driving?: Map<string, Driving> };

/**
 * Steers a run (docs/agents.md, "Steering"): judged first (the run's principal, or as a cancel is), then
 * queued with the run this process drives (written with its next checkpoint when it has one),
 * queued in the run store for the process that drives it (apart from its checkpoint, which that
 * driver's lease writes), or appended to the checkpoint of a run nobody drives (halted on a
 * request, failed) by compare-and-set, so the run's next turn, in whichever process, takes it.
 *
 * @throws {@link InvalidArgumentError} an empty or oversized message, or too many queued.
 * @throws {@link RunConflictError} the run is over, or another process drives it and the run store keeps no steering queue.
 * @throws {@link RunNotFoundError} not driven here and no checkpoint.
 * @throws {@link AnswerRefusedError} the answer policy refused the steer; nothing was queued.
 */
export async function steerRun(parts: SteerTarget, runId: string, content: string, options: SteerOptions = {}): Promise<SteerReceipt> {
  const message = steerMessage(content, options.id);
  const driven = parts.driving?.get(runId);
  const queue = driven?.steering;
  if (driven && queue?.open) {
    await judgeSteer(parts, runId, { principal: driven.principal, open: [] }, options);
    if (queue.push(message)) {
      // Durable with the run's next write; a lost write leaves it in memory, where the next turn still takes it.
      await queue.persist?.()?.catch(() => undefined);
      return { runId, id: message.id, queued: 'driven' };
    }
  }
  // The loop here was left: its last write (a halt) is waited for, and the message goes to that checkpoint.
  if (driven?.ended) await driven.ended.catch(() => undefined);
  return steerStored(parts, runId, message, options);
}

async function steerStored(parts: SteerTarget, runId: string, message: SteerMessage, options: SteerOptions): Promise<SteerReceipt> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const { state, version } = await parts.checkpoints.load(runId);
    if (isEnded(state.phase)) throw new RunConflictError(runId, `it is over (${state.phase}): nothing takes a steered message`);
    // A live driver elsewhere writes this checkpoint under its lease; a write here would stop it.
    if (state.phase === 'running' && !parts.checkpoints.lapsed(state)) return steerElsewhere(parts, runId, state, message, options);
    const open = state.phase === 'halted' ? (state.halted?.calls ?? []) : [];
    await judgeSteer(parts, runId, { principal: state.principal, open }, options);
    const queued = state.steering ?? [];
    if (queued.some((held) => held.id === message.id) || userMessageIds(state).has(message.id))
      return { runId, id: message.id, queued: 'stored' };
    if (queued.length >= MAX_QUEUED_STEERS) throw full(message.id);
    const next: RunState = { ...state, steering: [...queued, message] };
    if (await parts.checkpoints.write(runId, version + 1, next)) return { runId, id: message.id, queued: 'stored' };
  }
  throw new RunConflictError(runId, 'its checkpoint kept changing while a message was steered into it');
}

/**
 * Queues a steer for the driver in another process, in the run store's queue: that driver takes
 * it at its next turn, writes it into its checkpoint, then deletes it from the queue (docs/agents.md, "Steering").
 */
async function steerElsewhere(
  parts: SteerTarget,
  runId: string,
  state: RunState,
  message: SteerMessage,
  options: SteerOptions,
): Promise<SteerReceipt> {
  const stored = parts.checkpoints.steeringQueue();
  if (!stored) throw new RunConflictError(runId, 'another process drives it now and the run store keeps no steering queue: steer it there');
  await judgeSteer(parts, runId, { principal: state.principal, open: [] }, options);
  const receipt: SteerReceipt = { runId, id: message.id, queued: 'elsewhere' };
  if ((state.steering ?? []).some((held) => held.id === message.id) || userMessageIds(state).has(message.id)) return receipt;
  const queued = await stored.queueSteer(runId, message, MAX_QUEUED_STEERS);
  if (queued === 'full') throw full(message.id);
  if (queued === 'no-run') throw new RunNotFoundError(runId);
  return receipt;
}

/**
 * Who may steer: the principal the run was made for (it is their conversation, and a steer
 * settles no request); anyone else is judged as a cancel is (`judgeCancel`): allowed to cancel
 * each open request of a halted run by the answer policy, else refused.
 */
async function judgeSteer(parts: SteerTarget, runId: string, run: CancelledRun, options: SteerOptions): Promise<void> {
  const by = options.audit?.by;
  if (by !== undefined && run.principal !== undefined && by.id === run.principal.id) return;
  await judgeCancel(parts, runId, run, options, 'steer');
}

function userMessageIds(state: RunState): Set<string> {
  const ids = new Set<string>();
  for (const message of state.messages) if (message.role === 'user' && message.id !== undefined) ids.add(message.id);
  return ids;
}

function steerMessage(content: unknown, id: unknown): SteerMessage {
  if (typeof content !== 'string' || content.trim() === '') throw new InvalidArgumentError('steer needs a message: a non-empty string');
  if (content.length > MAX_STEER_CHARS) throw new InvalidArgumentError(`a steered message is at most ${MAX_STEER_CHARS} characters`);
  if (id !== undefined && (typeof id !== 'string' || id === '' || id.length > MAX_STEER_ID_CHARS))
    throw new InvalidArgumentError(`steer id must be a non-empty string of at most ${MAX_STEER_ID_CHARS} characters`);
  return { id: id ?? `steer-${randomUUID()}`, content };
}
