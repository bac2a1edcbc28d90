import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import {
  AlreadyResolvedError,
  AnswerRefusedError,
  ClaimLostError,
  InvalidAnswerError,
  InvalidResumeError,
  RunConflictError,
  StoreUnavailableError,
  SuspensionMismatchError,
  UnknownSuspensionError,
  UnregisteredToolError,
} from '../errors';
import { messageOf } from '../errors/message';
import { AnsweredByOtherError, InboxError, InboxInvalidInputError, InboxUnauthorizedError } from './errors';
import { sendJson } from './http';
import type { InboxLogger } from './options';

/** Internal errors go to stderr when the host gives no logger. */
const STDERR_LOGGER: InboxLogger = {
  error: (message, stack) => void process.stderr.write(`${message}\n${stack === undefined ? '' : `${stack}\n`}`),
};

/**
 * Logs an internal error through `logger` under a new correlation id and returns the id:
 * one line (the id, where, the error's name and message) and the stack. A logger that throws
 * is ignored, so the client still gets its answer.
 */
export function errorReporter(logger: InboxLogger = STDERR_LOGGER): (where: string, error: unknown) => string {
  return (where, error) => {
    const id = randomUUID();
    try {
      // Inside the try: a thrown value's getters may throw too (see messageOf).
      const name = typeof error === 'object' && error !== null && 'name' in error ? String((error as Error).name) : 'Error';
      const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : undefined;
      logger.error(`toolnexus inbox: internal error, correlation id ${id}: ${where}: ${name}: ${messageOf(error)}`, stack);
    } catch {
      // A failing logger (or error) must not keep the client from its answer.
    }
    return id;
  };
}

/**
 * The status and body of a failed request. A fault of ours says nothing of its cause: it is
 * logged (`report`) and the body carries only the correlation id of the log line.
 */
export function fail(response: ServerResponse, error: unknown, report: () => string): void {
  const status = statusOf(error);
  const internal = status >= 500 || typeof error !== 'object' || error === null || !('code' in error);
  const correlationId = internal ? report() : undefined;
  if (response.headersSent) {
    response.end();
    return;
  }
  if (correlationId !== undefined) {
    const unavailable = error instanceof StoreUnavailableError;
    response.setHeader('x-correlation-id', correlationId);
    sendJson(response, unavailable ? 503 : 500, {
      error: {
        code: unavailable ? 'TOOLNEXUS_STORE_UNAVAILABLE' : 'TOOLNEXUS_INBOX_INTERNAL',
        message: `${unavailable ? 'the store is unavailable; retry later' : 'the inbox failed'}; see the server log (correlation id ${correlationId})`,
        correlationId,
      },
    });
    return;
  }
  const known = error as Error & { code: string };
  const body: Record<string, unknown> = { code: known.code, message: known.message };
  if (error instanceof AnsweredByOtherError) {
    body.status = error.suspensionStatus;
    if (error.answeredBy) body.answeredBy = error.answeredBy;
  }
  if (error instanceof InboxInvalidInputError) body.problems = error.problems;
  if (error instanceof InboxUnauthorizedError) response.setHeader('www-authenticate', 'Bearer realm="toolnexus-inbox"');
  sendJson(response, status, { error: body });
}

function statusOf(error: unknown): number {
  if (error instanceof InboxError) return error.status;
  if (error instanceof UnknownSuspensionError) return 404;
  if (error instanceof AnswerRefusedError) return 403;
  if (error instanceof InvalidAnswerError || error instanceof InvalidResumeError) return 400;
  if (
    error instanceof AlreadyResolvedError ||
    error instanceof ClaimLostError ||
    error instanceof RunConflictError ||
    error instanceof SuspensionMismatchError ||
    error instanceof UnregisteredToolError
  ) {
    return 409;
  }
  return 500;
}
