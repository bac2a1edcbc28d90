import { messageOf } from '../errors/message';
import type { PendingRequest, ToolResult } from './wire';

/**
 * A successful result. A string is kept as is; anything else is `JSON.stringify`'d.
 * A value JSON cannot carry (circular, a function, a symbol, a BigInt, a throwing `toJSON`)
 * becomes an error result saying so: the model never gets `"[object Object]"` or source text.
 */
export function success(value: unknown, metadata?: Record<string, unknown>): ToolResult {
  const text = typeof value === 'string' ? { output: value } : stringifyValue(value);
  if ('problem' in text) return failure(`the tool's output cannot be sent to the model: ${text.problem}`, metadata);
  const output = text.output;
  return metadata === undefined ? { output, isError: false } : { output, isError: false, metadata };
}

/** A failed result carrying `message` as its output. */
export function failure(message: string, metadata?: Record<string, unknown>): ToolResult {
  return metadata === undefined ? { output: message, isError: true } : { output: message, isError: true, metadata };
}

/** The fields of a {@link PendingRequest} a tool supplies; `id` is generated when absent. */
export type PendingRequestInit = Omit<PendingRequest, 'id'> & { id?: string };

/**
 * Suspends the call: the result carries the request on `metadata.pending`.
 * A request without an `id` gets one (`pnd-` + a random UUID, so it is unique across processes).
 */
export function pending(req: PendingRequestInit): ToolResult {
  const request: PendingRequest = { ...req, id: req.id ?? newPendingId() };
  const output = request.url ? `${request.prompt}\n${request.url}` : request.prompt;
  return { output, isError: true, metadata: { pending: request } };
}

/** Suspends the call until the user has logged in at `url` (secrets stay out of band). */
export function authRequired(url: string, prompt = 'Authorization required to continue'): ToolResult {
  return pending({ kind: 'authorization', prompt, url });
}

/** The request a suspended result carries, or `undefined` for any other result. */
export function pendingOf(result: ToolResult | undefined | null): PendingRequest | undefined {
  const candidate = result?.metadata?.pending;
  return isPendingRequest(candidate) ? candidate : undefined;
}

/** Replaces every character outside `[a-zA-Z0-9_-]` with `_`. */
export function sanitizeName(s: string): string {
  return s.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** A fresh suspension id: `pnd-` plus a random UUID. */
export function newPendingId(): string {
  return `pnd-${nodeCrypto().randomUUID()}`;
}

/*
 * node:crypto is loaded by the first suspension, not when the root entry is imported: it is
 * several milliseconds of a program's start-up, and a process that only dispatches tools never
 * needs it (docs/design.md, "Entries"). Node caches it after the first load.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
const nodeCrypto = (): typeof import('node:crypto') => require('node:crypto') as typeof import('node:crypto');

/** True for a value shaped like a {@link ToolResult}. */
export function isToolResult(value: unknown): value is ToolResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ToolResult).output === 'string' &&
    typeof (value as ToolResult).isError === 'boolean'
  );
}

function isPendingRequest(value: unknown): value is PendingRequest {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as PendingRequest).id === 'string' &&
    typeof (value as PendingRequest).kind === 'string' &&
    typeof (value as PendingRequest).prompt === 'string'
  );
}

function stringifyValue(value: unknown): { output: string } | { problem: string } {
  if (value === undefined) return { output: 'undefined' };
  if (typeof value === 'function') return { problem: 'it is a function, not JSON' };
  if (typeof value === 'symbol') return { problem: 'it is a symbol, not JSON' };
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    // circular, a BigInt somewhere, a throwing toJSON or getter
    return { problem: `it is not JSON-serialisable (${messageOf(error)})` };
  }
  // Only a toJSON returning undefined/a function/a symbol gets here.
  return text === undefined ? { problem: 'it has no JSON form' } : { output: text };
}
