import { randomUUID } from 'node:crypto';
import { Catch, HttpStatus, Injectable, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  AlreadyResolvedError,
  InvalidAnswerError,
  InvalidArgumentError,
  InvalidResumeError,
  ModelError,
  RunConflictError,
  RunNotFoundError,
  StoreUnavailableError,
  ToolnexusError,
  UnknownSuspensionError,
} from '../errors';
import { messageOf } from '../errors/message';

/** The JSON body {@link ToolnexusExceptionFilter} answers with; Nest's own error shape plus `code`. */
export interface ToolnexusErrorBody {
  statusCode: number;
  /** The HTTP reason phrase (`Not Found`, `Conflict`, ...). */
  error: string;
  /**
   * What went wrong, in words a client can show. For a 4xx, the error's own message; for a
   * 5xx, a generic sentence with the correlation id (the details are in the server log).
   */
  message: string;
  /**
   * The error's stable code (`TOOLNEXUS_UNKNOWN_SUSPENSION`, `TOOLNEXUS_ALREADY_RESOLVED`, ...),
   * for programs. Unlike the class name, a minified build sends the same.
   */
  code: string;
  /** 5xx only: the id of the server log line with the real error (also sent as the `x-correlation-id` header). */
  correlationId?: string;
}

/** What a 5xx body says instead of the error's message, which may hold internals (addresses, a provider's reply). */
const GENERIC: Partial<Record<number, string>> = {
  500: 'Internal server error',
  502: 'The model provider failed to answer',
  503: 'A backing service is unavailable; retry later',
};

const REASONS: Partial<Record<number, string>> = {
  400: 'Bad Request',
  404: 'Not Found',
  409: 'Conflict',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** The status of each released code that is not a server-side fault (those are 500). */
const STATUS_BY_CODE: ReadonlyMap<string, number> = new Map([
  ['TOOLNEXUS_UNKNOWN_SUSPENSION', HttpStatus.NOT_FOUND],
  ['TOOLNEXUS_RUN_NOT_FOUND', HttpStatus.NOT_FOUND],
  ['TOOLNEXUS_ALREADY_RESOLVED', HttpStatus.CONFLICT],
  ['TOOLNEXUS_RUN_CONFLICT', HttpStatus.CONFLICT],
  // The replay lost its claim to another process and no outcome is stored yet: the client retries.
  ['TOOLNEXUS_CLAIM_LOST', HttpStatus.CONFLICT],
  ['TOOLNEXUS_INVALID_ANSWER', HttpStatus.BAD_REQUEST],
  ['TOOLNEXUS_INVALID_RESUME', HttpStatus.BAD_REQUEST],
  ['TOOLNEXUS_INVALID_ARGUMENT', HttpStatus.BAD_REQUEST],
  ['TOOLNEXUS_STORE_UNAVAILABLE', HttpStatus.SERVICE_UNAVAILABLE],
  ['TOOLNEXUS_MODEL', HttpStatus.BAD_GATEWAY],
  ['TOOLNEXUS_MODEL_HTTP', HttpStatus.BAD_GATEWAY],
  ['TOOLNEXUS_MODEL_TIMEOUT', HttpStatus.BAD_GATEWAY],
  ['TOOLNEXUS_MODEL_CONNECTION', HttpStatus.BAD_GATEWAY],
  ['TOOLNEXUS_MODEL_RESPONSE', HttpStatus.BAD_GATEWAY],
]);

/**
 * The HTTP status a toolnexus error deserves: the client's mistakes are 4xx, ours and
 * upstream's 5xx. Matched by the error's stable `code` first, which survives a minifier
 * and a second copy of the package; a code of a subclass's own falls back to the class
 * it extends.
 */
export function httpStatusOf(error: ToolnexusError): number {
  const byCode = typeof error.code === 'string' ? STATUS_BY_CODE.get(error.code) : undefined;
  if (byCode !== undefined) return byCode;
  if (error instanceof UnknownSuspensionError || error instanceof RunNotFoundError) return HttpStatus.NOT_FOUND;
  if (error instanceof AlreadyResolvedError || error instanceof RunConflictError) return HttpStatus.CONFLICT;
  if (error instanceof InvalidAnswerError || error instanceof InvalidResumeError || error instanceof InvalidArgumentError)
    return HttpStatus.BAD_REQUEST;
  if (error instanceof StoreUnavailableError) return HttpStatus.SERVICE_UNAVAILABLE;
  if (error instanceof ModelError) return HttpStatus.BAD_GATEWAY;
  return HttpStatus.INTERNAL_SERVER_ERROR;
}

/**
 * Answers toolnexus errors over HTTP with a status that says whose fault it was: a stale
 * or forged answer id is 404, an answer to a settled suspension is 409, a malformed answer
 * is 400, a model provider failure 502. Every 5xx (a corrupt checkpoint, an unregistered
 * tool, a provider or store failure) answers a generic message with a correlation id and
 * logs the real error with that id through Nest's `Logger`; 4xx keep their message.
 *
 * @example
 * ```ts
 * providers: [{ provide: APP_FILTER, useClass: ToolnexusExceptionFilter }]
 * ```
 */
@Injectable()
@Catch(ToolnexusError)
export class ToolnexusExceptionFilter implements ExceptionFilter<ToolnexusError> {
  private readonly logger = new Logger('ToolnexusExceptionFilter');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: ToolnexusError, host: ArgumentsHost): void {
    // HTTP only: other transports (RPC, WebSockets) keep their own error handling.
    if (host.getType() !== 'http') throw error;
    const statusCode = httpStatusOf(error);
    const response: unknown = host.switchToHttp().getResponse();
    const { httpAdapter } = this.adapterHost;
    const body: ToolnexusErrorBody = { statusCode, error: REASONS[statusCode] ?? 'Error', message: '', code: error.code };
    if (statusCode < 500) {
      // The client's own mistake: the message tells it what to fix.
      body.message = messageOf(error);
    } else {
      // Ours or upstream's: the body says only that, with an id to find the log line
      // holding the real error (an address that refused, a provider's 401 text...).
      const correlationId = randomUUID();
      body.message = `${GENERIC[statusCode] ?? 'Internal server error'} (correlation id ${correlationId})`;
      body.correlationId = correlationId;
      this.logger.error(`${statusCode} ${error.code} [correlation id ${correlationId}]: ${messageOf(error)}`, error.stack);
      try {
        httpAdapter.setHeader(response, 'x-correlation-id', correlationId);
      } catch {
        // an adapter without headers still gets the id in the body
      }
    }
    httpAdapter.reply(response, body, statusCode);
  }
}
