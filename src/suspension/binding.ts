import * as crypto from 'node:crypto';
import { createHash, createHmac } from 'node:crypto';
import type { AnsweredRequest, PendingRequest } from '../results/wire';
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
  of(call: Bound): string {
    return this.digest(canonicalJson(partsOf(call)));
  }

  /**
   * `call` as it should be stored: its parts in the canonical key order, with their digest.
   * A store that keeps key order (SQLite, memory) then gives back parts whose plain
   * `JSON.stringify` is the canonical text, so {@link problem} can check them without sorting.
   */
  seal<TCall extends Bound>(call: TCall): TCall & { binding: string } {
    const text = canonicalJson(partsOf(call));
    const parts = JSON.parse(text) as Parts;
    const sealed = { ...call, request: parts.request, binding: this.digest(text) };
    if (call.args !== undefined) sealed.args = parts.args;
    if (call.chain !== undefined) sealed.chain = parts.chain;
    return sealed;
  }

  /** Why `call` is not the call that was recorded, or `undefined` when it is. */
  problem(call: SuspendedCall): string | undefined {
    if (call.binding === undefined) {
      // Rows from before bindings existed; with a key, a missing digest is a stripped one.
      return this.key === undefined ? undefined : 'it carries no binding digest, and this coordinator requires a keyed one';
    }
    // Equal digests mean equal texts, so any JSON text of the parts that matches proves them
    // unchanged: first the plain one (right for a sealed call whose store kept key order),
    // then the canonical one (a store that reorders keys, or a call stored unsealed).
    if (call.binding === this.digest(JSON.stringify(partsOf(call)))) return undefined;
    if (call.binding === this.of(call)) return undefined;
    return 'its tool, arguments, run, request or chain differ from what was recorded';
  }

  private digest(text: string): string {
    if (this.key !== undefined) return `hmac-sha256:${createHmac('sha256', this.key).update(text).digest('base64url')}`;
    // `crypto.hash` (Node 20.12+) skips the Hash object; same digest.
    if (oneShotHash) return `sha256:${oneShotHash('sha256', text, 'base64url')}`;
    return `sha256:${createHash('sha256').update(text).digest('base64url')}`;
  }
}

/** What a binding covers. */
type Bound = Pick<SuspendedCall, 'tool' | 'args' | 'callId' | 'runId' | 'request' | 'chain'>;

/** The parts a digest is taken over, keys in canonical (sorted) order. */
interface Parts {
  args: unknown;
  callId: string | null;
  chain: AnsweredRequest[];
  request: PendingRequest;
  runId: string | null;
  tool: string;
}

function partsOf(call: Bound): Parts {
  return {
    args: call.args ?? null,
    callId: call.callId ?? null,
    chain: call.chain ?? [],
    request: call.request,
    runId: call.runId ?? null,
    tool: call.tool,
  };
}

const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string }).hash;

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
