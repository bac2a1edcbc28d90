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
 *
 * The digest is taken over canonical JSON (keys sorted), which any store that keeps JSON
 * values gives back. Sorting is slow on a path every resolve takes, so a binding also
 * carries, after a `/`, the digest of the call's plain `JSON.stringify` text when that text
 * differs: a store that keeps key order (SQLite, memory, PostgreSQL `json`) gives that text
 * back, and the check needs no sorting. The arguments themselves are stored as given.
 */
export class Binding {
  constructor(private readonly key?: string | Uint8Array) {}

  /** The canonical digest of `call`, prefixed with its algorithm. */
  of(call: Bound): string {
    return `${this.algorithm}:${this.digest(canonicalJson(partsOf(call)))}`;
  }

  /** `call` with its binding: the canonical digest, then the plain text's when it differs. */
  seal<TCall extends Bound>(call: TCall): TCall & { binding: string } {
    const parts = partsOf(call);
    const canonical = canonicalJson(parts);
    const plain = JSON.stringify(parts);
    const binding = `${this.algorithm}:${this.digest(canonical)}${plain === canonical ? '' : `/${this.digest(plain)}`}`;
    return { ...call, binding };
  }

  /** Why `call` is not the call that was recorded, or `undefined` when it is. */
  problem(call: SuspendedCall): string | undefined {
    const { binding } = call;
    if (binding === undefined) {
      // Rows from before bindings existed; with a key, a missing digest is a stripped one.
      return this.key === undefined ? undefined : 'it carries no binding digest, and this coordinator requires a keyed one';
    }
    // Equal digests mean equal texts, so either text of the parts matching its digest proves
    // them unchanged: the plain one first (no sorting), then the canonical one.
    const parts = partsOf(call);
    const cut = binding.indexOf('/');
    const canonicalDigest = cut < 0 ? binding : binding.slice(0, cut);
    const plainDigest = cut < 0 ? canonicalDigest : `${this.algorithm}:${binding.slice(cut + 1)}`;
    if (plainDigest === `${this.algorithm}:${this.digest(JSON.stringify(parts))}`) return undefined;
    if (canonicalDigest === `${this.algorithm}:${this.digest(canonicalJson(parts))}`) return undefined;
    return 'its tool, arguments, run, request or chain differ from what was recorded';
  }

  private get algorithm(): string {
    return this.key === undefined ? 'sha256' : 'hmac-sha256';
  }

  private digest(text: string): string {
    if (this.key !== undefined) return createHmac('sha256', this.key).update(text).digest('base64url');
    // `crypto.hash` (Node 20.12+) skips the Hash object; same digest.
    if (oneShotHash) return oneShotHash('sha256', text, 'base64url');
    return createHash('sha256').update(text).digest('base64url');
  }
}

/** What a binding covers. */
type Bound = Pick<SuspendedCall, 'tool' | 'args' | 'callId' | 'runId' | 'request' | 'chain' | 'requestedBy'>;

/** The parts a digest is taken over, in canonical (sorted) key order. */
interface Parts {
  args: unknown;
  callId: string | null;
  chain: AnsweredRequest[];
  request: PendingRequest;
  runId: string | null;
  tool: string;
  /** Only when recorded: a call without one digests as it always did. */
  requestedBy?: { id: string; name?: string };
}

function partsOf(call: Bound): Parts {
  return {
    args: call.args ?? null,
    callId: call.callId ?? null,
    chain: call.chain ?? [],
    request: call.request,
    runId: call.runId ?? null,
    tool: call.tool,
    ...(call.requestedBy === undefined ? {} : { requestedBy: call.requestedBy }),
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
