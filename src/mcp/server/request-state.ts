import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidArgumentError } from '../../errors';
import { McpRequestStateError } from './errors';

/**
 * What a sealed MRTR `requestState` carries (docs/mcp.md, "A suspended call over MCP"): the
 * suspension it stands for, who it was given to, which request it belongs to and until when.
 * Nothing else: no argument value, no answer (the client can read the payload; it is signed,
 * not encrypted).
 */
export interface RequestStatePayload {
  /** The suspension id (the stored call's `request.id`), for a suspended call. */
  sid?: string;
  /** The tool's own state, for an input round (`inputRound({ requestState })`). */
  data?: string;
  /** The principal the state was given to: only a retry authenticated as them may present it. */
  sub: string;
  /** SHA-256 of the request it answers (method, tool name, arguments). */
  dig: string;
  /** Expiry, ms since the epoch by the server's clock. */
  exp: number;
}

/** Keys sign from the first; every listed key still opens (rotation: add the new key first, drop the old one after the TTL). */
export type RequestStateKeys = ReadonlyArray<string | Uint8Array>;

const VERSION = 'v1';
const MIN_KEY_BYTES = 32;
const MAX_STATE_CHARS = 4096;

/**
 * Seals and opens `requestState` with HMAC-SHA256: `v1.<payload base64url>.<kid>.<mac base64url>`,
 * `kid` being the first 8 hex digits of the SHA-256 of the key that signed, so a rotated key
 * is found without trying every one. A state that fails any check is an
 * {@link McpRequestStateError} saying which check, and nothing is looked up.
 */
export class RequestStateSealer {
  private readonly keys: Array<{ kid: string; key: Buffer }>;

  constructor(keys: RequestStateKeys) {
    if (!Array.isArray(keys) || keys.length === 0) throw new InvalidArgumentError('requestStateKeys must list at least one key');
    this.keys = keys.map((value, index) => {
      const key = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
      if (key.length < MIN_KEY_BYTES)
        throw new InvalidArgumentError(`requestStateKeys[${index}] must be at least ${MIN_KEY_BYTES} bytes, got ${key.length}`);
      return { kid: createHash('sha256').update(key).digest('hex').slice(0, 8), key };
    });
  }

  seal(payload: RequestStatePayload): string {
    const signer = this.keys[0] as { kid: string; key: Buffer };
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return `${VERSION}.${body}.${signer.kid}.${mac(signer.key, body)}`;
  }

  /**
   * The payload of `state`, checked: its form and signature, its expiry at `now`, that it was
   * given to `principal` and that it belongs to the request whose digest is `digest`.
   *
   * @throws {@link McpRequestStateError} tampered, expired, another principal's or another request's.
   */
  open(state: unknown, expect: { now: number; principal: string; digest: string }): RequestStatePayload {
    if (typeof state !== 'string' || state.length > MAX_STATE_CHARS) throw new McpRequestStateError('malformed');
    const [version, body, kid, given, ...rest] = state.split('.');
    if (version !== VERSION || body === undefined || kid === undefined || given === undefined || rest.length > 0)
      throw new McpRequestStateError('malformed');
    const signer = this.keys.find((entry) => entry.kid === kid);
    if (!signer) throw new McpRequestStateError('tampered');
    const expected = Buffer.from(mac(signer.key, body), 'utf8');
    const presented = Buffer.from(given, 'utf8');
    if (expected.length !== presented.length || !timingSafeEqual(expected, presented)) throw new McpRequestStateError('tampered');
    const payload = payloadOf(body);
    if (!payload) throw new McpRequestStateError('tampered');
    if (payload.exp <= expect.now) throw new McpRequestStateError('expired');
    if (payload.sub !== expect.principal) throw new McpRequestStateError('foreign-principal');
    if (payload.dig !== expect.digest) throw new McpRequestStateError('foreign-request');
    return payload;
  }
}

/**
 * The digest a state is bound to: the method, the tool and its arguments, as JSON with sorted
 * keys, so the same call retried digests the same and any other call does not.
 */
export function requestDigest(method: string, name: string, args: unknown): string {
  return createHash('sha256').update(canonical({ method, name, args })).digest('base64url');
}

function mac(key: Buffer, body: string): string {
  return createHmac('sha256', key).update(`${VERSION}.${body}`).digest('base64url');
}

function payloadOf(body: string): RequestStatePayload | undefined {
  try {
    const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<RequestStatePayload> | null;
    if (!value || typeof value.sub !== 'string' || typeof value.dig !== 'string') return undefined;
    if (typeof value.exp !== 'number' || !Number.isFinite(value.exp)) return undefined;
    if (value.sid !== undefined && typeof value.sid !== 'string') return undefined;
    if (value.data !== undefined && typeof value.data !== 'string') return undefined;
    const payload: RequestStatePayload = { sub: value.sub, dig: value.dig, exp: value.exp };
    if (value.sid !== undefined) payload.sid = value.sid;
    if (value.data !== undefined) payload.data = value.data;
    return payload;
  } catch {
    return undefined;
  }
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
