import { createHash, createHmac } from 'node:crypto';
import type { SuspendedCall } from './store';

/**
 * A digest of what a suspended call is: its tool, arguments, place in a run, request and
 * chain. Written when the call is recorded and checked before anything replays it, so a row
 * edited in the store (other arguments, another tool) is refused instead of run.
 *
 * Without a key it is a SHA-256: it catches a row edited by hand or by a bug, not someone
 * who recomputes it. With a key (kept out of the database) it is an HMAC that nobody
 * without the key can forge.
 */
export class Binding {
  constructor(private readonly key?: string | Uint8Array) {}

  /** The digest of `call`, prefixed with its algorithm. */
  of(call: Pick<SuspendedCall, 'tool' | 'args' | 'callId' | 'runId' | 'request' | 'chain'>): string {
    const text = canonicalJson({
      tool: call.tool,
      args: call.args ?? null,
      callId: call.callId ?? null,
      runId: call.runId ?? null,
      request: call.request,
      chain: call.chain ?? [],
    });
    if (this.key === undefined) return `sha256:${createHash('sha256').update(text).digest('base64url')}`;
    return `hmac-sha256:${createHmac('sha256', this.key).update(text).digest('base64url')}`;
  }

  /** Why `call` is not the call that was recorded, or `undefined` when it is. */
  problem(call: SuspendedCall): string | undefined {
    if (call.binding === undefined) {
      // Rows from before bindings existed; with a key, a missing digest is a stripped one.
      return this.key === undefined ? undefined : 'it carries no binding digest, and this coordinator requires a keyed one';
    }
    if (call.binding === this.of(call)) return undefined;
    return 'its tool, arguments, run, request or chain differ from what was recorded';
  }
}

/**
 * JSON with object keys sorted, so equal values give equal text whatever their key order.
 * Written out by hand rather than through a `JSON.stringify` replacer that rebuilds every
 * object sorted: it is on the path of every recorded and every resolved suspension.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'undefined';
  return canonical(value) ?? 'null';
}

/** One value as `JSON.stringify` would write it (`toJSON` honoured), keys sorted; `undefined` where JSON omits it. */
function canonical(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const json = (value as { toJSON?: unknown }).toJSON;
  if (typeof json === 'function') return canonical((json as () => unknown).call(value));
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item) ?? 'null').join(',')}]`;
  const record = value as Record<string, unknown>;
  let text = '';
  for (const key of Object.keys(record).sort()) {
    const item = canonical(record[key]);
    if (item === undefined) continue;
    text += `${text === '' ? '' : ','}${JSON.stringify(key)}:${item}`;
  }
  return `{${text}}`;
}

/** Equality of two JSON values, whatever their key order. */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
