import { ModelConnectionError, ModelTimeoutError } from '../errors';
import { messageOf } from '../errors/message';
import type { AttemptErrors } from './attempt';

/** One per provider name, made once: a model's attempt needs it on every call. */
const byProvider = new Map<string, AttemptErrors>();

/** A model's attempt failures, as {@link ModelTimeoutError} and {@link ModelConnectionError} naming `provider`. */
export function modelAttemptErrors(provider: string): AttemptErrors {
  let errors = byProvider.get(provider);
  if (errors === undefined) {
    errors = {
      timeout: (ms, attempt) => new ModelTimeoutError(provider, ms, attempt),
      network: (error, attempt) => new ModelConnectionError(provider, describeNetworkError(error), attempt, { cause: error }),
    };
    byProvider.set(provider, errors);
  }
  return errors;
}

/**
 * What went wrong on the network (`ECONNREFUSED`, a TLS failure), with its code when it has
 * one. node:http's errors carry it themselves; fetch says only "fetch failed" and carries it
 * in its cause, so there the cause is what the message reports.
 */
function describeNetworkError(error: unknown): string {
  // Duck-typed: fetch's errors may come from another realm (a VM context), where instanceof fails.
  if (!hasMessage(error)) return messageOf(error);
  const { cause } = error;
  const source = hasMessage(cause) ? cause : error;
  return source.code
    ? `${typeof source.code === 'string' || typeof source.code === 'number' ? source.code : 'error'} (${messageOf(source)})`
    : messageOf(source);
}

function hasMessage(value: unknown): value is { message: string; code?: unknown; cause?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}
