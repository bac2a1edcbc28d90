import { StoreError, StoreUnavailableError } from '../../errors';
import { messageOf } from '../../errors/message';

/** Errors that mean "the database could not be reached or dropped the connection", not "the request was wrong". */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);
/** SQLSTATEs of a server that is shutting down, starting up, or out of connections. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '57P05']);
const DISCONNECT_MESSAGE =
  /connection terminated|timeout exceeded when trying to connect|connection error|not queryable|client was closed|server closed the connection/i;

/**
 * What a failed query means to the caller: {@link StoreUnavailableError} when the database
 * was away (retry later, nothing stored was lost), {@link StoreError} when it refused
 * the request. Errors the store raised itself pass through.
 */
export function translate(error: unknown, operation: string): Error {
  if (error instanceof StoreError) return error;
  if (isUnavailable(error)) {
    return new StoreUnavailableError(
      `PostgreSQL was unavailable during the ${operation} (${messageOf(error)}). ` +
        'Suspensions already stored are kept; retry once the database is reachable.',
      { cause: error },
    );
  }
  return new StoreError(`PostgreSQL rejected the ${operation}: ${messageOf(error)}`, { cause: error });
}

/** True when the server, not the request, is the problem. */
export function isUnavailable(error: unknown): boolean {
  if (!errorLike(error)) return false;
  const { code } = error;
  if (typeof code === 'string') {
    if (NETWORK_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08')) return true;
  }
  if (nestedErrors(error).some(isUnavailable)) return true;
  return DISCONNECT_MESSAGE.test(error.message);
}

/** A unique constraint refused a row (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return errorLike(error) && error.code === '23505';
}

/** Error-like, whatever realm made it (Node's own socket errors fail `instanceof Error` inside a vm or jest). */
function errorLike(value: unknown): value is { message: string; code?: unknown; errors?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}

function nestedErrors(error: { errors?: unknown }): unknown[] {
  return Array.isArray(error.errors) ? error.errors : [];
}
