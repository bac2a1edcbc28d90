import { EventQueue } from './event-queue';
import type { RunEvent, RunResult } from './types';

/**
 * Runs `body` and yields its events as they happen, ending after `done`. A consumer that
 * stops reading early ends the run: the model call aborts, tools see the signal.
 */
export function streamRun(
  callerSignal: AbortSignal | undefined,
  body: (emit: (event: RunEvent) => void, signal: AbortSignal) => Promise<RunResult>,
): AsyncGenerator<RunEvent> {
  const queue = new EventQueue<RunEvent>();
  const stop = new AbortController();
  const signal = callerSignal ? AbortSignal.any([callerSignal, stop.signal]) : stop.signal;
  async function* events(): AsyncGenerator<RunEvent> {
    body((event) => queue.push(event), signal).then(
      () => queue.close(),
      (error: unknown) => queue.fail(error),
    );
    try {
      yield* queue;
    } finally {
      if (!stop.signal.aborted) stop.abort(new DOMException('the stream consumer stopped reading', 'AbortError'));
    }
  }
  return events();
}
