import { ATTR, EVENT } from './conventions';
import { loadOtelApi } from './otel';
import { errorTypeOf } from './telemetry';

/**
 * Adds a retry event to the active span (a model call's `chat` span) when an HTTP attempt
 * failed and is tried again. Retries are rare and followed by a backoff, so looking the api
 * up here costs nothing that matters; no span, no event.
 */
export function noteRetry(attempt: number, failure: unknown): void {
  const span = loadOtelApi()?.trace.getActiveSpan();
  if (!span?.isRecording()) return;
  const status = (failure as { status?: unknown } | null)?.status;
  span.addEvent(EVENT.retry, {
    [ATTR.retryAttempt]: attempt,
    [ATTR.errorType]: errorTypeOf(failure),
    ...(typeof status === 'number' ? { [ATTR.httpStatus]: status } : {}),
  });
}
