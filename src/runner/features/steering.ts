import { AGAIN } from '../next-step';
import type { RunFeature } from './feature';

/**
 * Steering as a feature (docs/agents.md, "Steering"): at each turn's start, the messages steered
 * into the run since the last one join the transcript as user messages, before the model is
 * asked (never between a turn's calls and their results), each told as a `steered` run event.
 * A run whose model answered while a message waited takes another turn for it; a run that
 * leaves its loop otherwise (halted, stopped) closes its queue, and its checkpoint keeps what no
 * turn took. The input guardrails judge what was taken (their own feature), and the next model
 * call's usage, which the budget counts, includes it.
 */
export const STEERING: RunFeature = {
  name: 'steering',
  start(live) {
    // A steer is written with the run's checkpoint at once, when the run has one (under its lease).
    if (live.steering) live.steering.persist = () => live.lease?.write();
  },
  beforeTurn(live) {
    const queue = live.steering;
    if (!queue || queue.size === 0) return undefined;
    const taken = queue.take();
    for (const message of taken) {
      live.messages.push({ role: 'user', content: message.content, id: message.id });
      live.emit?.({ type: 'steered', message: { id: message.id, content: message.content } });
    }
    live.steered = taken;
    return undefined;
  },
  next(live, next) {
    const queue = live.steering;
    if (!queue || next.type === 'again' || next.type === 'handoff') return next;
    // The model answered while a message waited: it answers that too (a typed answer, once accepted, is final).
    if (next.type === 'final' && queue.size > 0 && !live.output) return AGAIN;
    queue.close();
    return next;
  },
};
