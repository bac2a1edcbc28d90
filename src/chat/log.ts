import { ModelError, ToolnexusError } from '../errors';
import type { AgentRunner } from '../runner/agent-runner';
import type { RunEvent } from '../runner/core/types';

/** The log of a chat back end (Nest's `Logger` is one). */
export interface ChatLogger {
  error(message: string): void;
}

/** Where failures go when the host gives no logger. */
export const STDERR_LOGGER: ChatLogger = { error: (message) => process.stderr.write(`${message}\n`) };

/** Logs a failed run of a chat: its id and the error's code (and a model's provider and status), never the error's message. */
export function failureLog(logger: ChatLogger = STDERR_LOGGER, runId: string): (error: unknown) => void {
  return (error) => {
    try {
      const code = error instanceof ToolnexusError ? error.code : 'an internal error';
      let line = `toolnexus chat: run ${runId} failed: ${code}`;
      if (error instanceof ModelError) {
        const status = (error as { status?: unknown }).status;
        line += ` (model provider ${error.provider}${typeof status === 'number' ? `, HTTP ${status}` : ''})`;
      }
      logger.error(line);
    } catch {
      // A failing logger must not keep the page from its error part.
    }
  };
}

/**
 * A halted run with no open question: a call whose replay stopped (its process died before
 * storing the outcome) is taken over with the answer that claimed it, once its lease lapsed
 * by the store's clock (the replay follows the tool's `idempotent` / `recovery` rule), then
 * the run is continued. What fails is logged by code, as the page is only told the chat is busy.
 */
export async function recoverHalted(runner: AgentRunner, runId: string, context: object | undefined, logger: ChatLogger): Promise<void> {
  const log = (what: string, error: unknown): void => {
    const code = error instanceof ToolnexusError ? error.code : error instanceof Error ? error.name : typeof error;
    try {
      logger.error(`toolnexus chat: run ${runId}: ${what} failed: ${code}`);
    } catch {
      // A failing logger changes nothing here.
    }
  };
  const store = runner.coordinator.store;
  // The takeover rule, as every door and the recovery loop apply it (docs/suspension.md).
  const taken = await runner.coordinator.recoverLapsed({ runId, limit: 1000, ...(context ? { context } : {}) });
  for (const entry of taken) if (entry.status === 'failed') log(`taking over suspension ${entry.id}`, entry.error);
  // A live holder is still replaying a call: the chat is busy until it ends.
  if ((await store.list({ runId, status: 'resolving' })).length > 0) return;
  if ((await store.list({ runId, status: 'pending' })).length > 0) return;
  await runner.recover(runId, context ? { context } : {}).catch((error: unknown) => log('recovering the run', error));
}

/** `events`, telling `failed` of the error that ends them, if one does (and passing it on). */
export async function* logFailure(events: AsyncIterable<RunEvent>, failed: (error: unknown) => void): AsyncGenerator<RunEvent> {
  try {
    yield* events;
  } catch (error) {
    failed(error);
    throw error;
  }
}
