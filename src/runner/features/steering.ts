import type { SteeringQueue } from '../core/store';
import type { AgentParts, LiveRun } from '../core/live-run';
import { AGAIN, type NextStep } from '../core/next-step';
import { MAX_QUEUED_STEERS, type SteerQueue } from '../core/steer';
import type { RunFeature } from '../core/feature';

/**
 * Steering as a feature (docs/agents.md, "Steering"): at each turn's start, the messages steered
 * into the run since the last one join the transcript as user messages, before the model is
 * asked (never between a turn's calls and their results), each told as a `steered` run event.
 * A run whose model answered while a message waited takes another turn for it; a run that
 * leaves its loop otherwise (halted, stopped) closes its queue, and its checkpoint keeps what no
 * turn took. The input guardrails judge what was taken (their own feature), and the next model
 * call's usage, which the budget counts, includes it.
 *
 * A checkpointed run (under a driver lease) also takes, at each turn's start, what other
 * processes queued for it in the run store: into the same queue as a local steer, written into
 * its checkpoint, and only then deleted from the store's queue.
 */
export function steeringFeature(parts: Pick<AgentParts, 'checkpoints'>): RunFeature {
  return {
    name: 'steering',
    start(live) {
      // A steer is written with the run's checkpoint at once, when the run has one (under its lease).
      if (live.steering) live.steering.persist = () => live.lease?.write();
    },
    beforeTurn(live) {
      const stored = storeQueueOf(parts, live);
      if (!stored) return take(live);
      return fromStoreQueue(stored, live).then(() => take(live));
    },
    next(live, next) {
      const queue = live.steering;
      if (!queue || next.type === 'again' || next.type === 'handoff') return next;
      // A final answer: what other processes queued while the model answered is read first, as a local steer would be waiting.
      const stored = next.type === 'final' && !live.output ? storeQueueOf(parts, live) : undefined;
      if (stored) return fromStoreQueue(stored, live).then(() => settle(live, queue, next));
      return settle(live, queue, next);
    },
  };
}

/** The run store's queue, for a run checkpointed under this process's lease whose loop still takes messages. */
function storeQueueOf(parts: Pick<AgentParts, 'checkpoints'>, live: LiveRun): SteeringQueue | undefined {
  return live.lease && live.version > 0 && live.steering?.open ? parts.checkpoints.steeringQueue() : undefined;
}

/** The model answered while a message waited: it answers that too (a typed answer, once accepted, is final); else the queue closes. */
function settle(live: LiveRun, queue: SteerQueue, next: NextStep): NextStep {
  if (next.type === 'final' && queue.size > 0 && !live.output) return AGAIN;
  queue.close();
  return next;
}

/** The waiting messages join the transcript. */
function take(live: LiveRun): undefined {
  const queue = live.steering;
  if (!queue || queue.size === 0) return undefined;
  const taken = queue.take();
  for (const message of taken) {
    live.messages.push({ role: 'user', content: message.content, id: message.id });
    live.emit?.({ type: 'steered', message: { id: message.id, content: message.content } });
  }
  live.steered = taken;
  return undefined;
}

/**
 * Moves what other processes queued for the run into its own queue, exactly once: the messages
 * are written into the checkpoint before they leave the store's queue, so a driver that dies
 * between the two leaves them in both, and whoever drives next knows them by id (held from the
 * checkpoint, or in the transcript) and only deletes them. A store that cannot be read now is
 * read again at the next turn; a lost write (another process took the run over) stops the run.
 */
async function fromStoreQueue(stored: SteeringQueue, live: LiveRun): Promise<void> {
  const queue = live.steering;
  if (!queue) return;
  const queued = await stored.queuedSteers(live.runId, MAX_QUEUED_STEERS).catch(() => []);
  if (queued.length === 0) return;
  const inTranscript = new Set<string>();
  for (const message of live.messages) if (message.role === 'user' && message.id !== undefined) inTranscript.add(message.id);
  let fresh = false;
  for (const message of queued) if (!inTranscript.has(message.id) && queue.adopt(message)) fresh = true;
  if (fresh) await live.lease?.write();
  await stored
    .dropSteers(
      live.runId,
      queued.map((message) => message.id),
    )
    .catch(() => undefined);
}
