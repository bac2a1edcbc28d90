import { createHash, randomBytes } from 'node:crypto';
import { InvalidArgumentError } from '../errors';

/**
 * A signed-in browser as the inbox keeps it, server-side (docs/operating.md, "Sign-ins"). The
 * cookie carries a random sign-in id; the store keys the sign-in by that id's SHA-256, so
 * what the store holds cannot be replayed as a cookie.
 */
export interface InboxSignIn {
  /** base64url SHA-256 of the sign-in id the browser's cookie carries. */
  key: string;
  /** Which bearer token signed it in: an HMAC of the token, never the token. A changed token ends its sign-ins. */
  credential: string;
  /** When it was signed in, in ms since the epoch (the inbox's clock). */
  createdAt: number;
  /** When it was last used, in ms since the epoch. */
  lastSeenAt: number;
}

/**
 * Where the inbox keeps its sign-ins. The default, {@link MemorySignInStore}, lives in one
 * process: with several replicas behind a load balancer, give them one shared store (a
 * table, Redis) implementing this, or a browser signed in on one replica is refused by
 * another and its sign-out revokes it on that one only.
 */
export interface InboxSignInStore {
  /** Keeps a new sign-in. */
  create(signIn: InboxSignIn): void | Promise<void>;
  /** The sign-in under `key`, or `undefined`. */
  get(key: string): InboxSignIn | undefined | Promise<InboxSignIn | undefined>;
  /** Records that the sign-in under `key` was used at `lastSeenAt`. */
  touch(key: string, lastSeenAt: number): void | Promise<void>;
  /** Forgets the sign-in under `key` (sign-out, expiry). Forgetting an unknown key does nothing. */
  delete(key: string): void | Promise<void>;
}

/** Sign-in lifetimes and where sign-ins are kept: `createInbox({ sign-ins: { ... } })`. */
export interface InboxSignInOptions {
  /** Where sign-ins are kept. Default: a {@link MemorySignInStore} of this inbox (one process). */
  store?: InboxSignInStore;
  /** A sign-in unused this long is over, in ms. Default 30 minutes. */
  idleMs?: number;
  /** A sign-in is over this long after sign-in, however used, in ms. Default 8 hours. */
  maxAgeMs?: number;
}

/**
 * Sign-ins in this process's memory, at most `maxSignIns` (default 1000): signing in past
 * that ends the least recently used one. Right for one process; see {@link InboxSignInStore}
 * for replicas.
 */
export class MemorySignInStore implements InboxSignInStore {
  // A Map iterates in insertion order; touching re-inserts, so the first entry is the least recently used.
  private readonly signIns = new Map<string, InboxSignIn>();
  private readonly maxSignIns: number;

  constructor(options: { maxSignIns?: number } = {}) {
    const max = options.maxSignIns ?? 1000;
    if (!Number.isSafeInteger(max) || max < 1) throw new InvalidArgumentError(`maxSignIns must be a positive integer, got ${String(max)}`);
    this.maxSignIns = max;
  }

  /** How many sign-ins are kept now. */
  get size(): number {
    return this.signIns.size;
  }

  create(signIn: InboxSignIn): void {
    while (this.signIns.size >= this.maxSignIns) {
      const oldest = this.signIns.keys().next().value as string;
      this.signIns.delete(oldest);
    }
    this.signIns.set(signIn.key, { ...signIn });
  }

  get(key: string): InboxSignIn | undefined {
    const signIn = this.signIns.get(key);
    return signIn ? { ...signIn } : undefined;
  }

  touch(key: string, lastSeenAt: number): void {
    const signIn = this.signIns.get(key);
    if (!signIn) return;
    this.signIns.delete(key);
    this.signIns.set(key, { ...signIn, lastSeenAt });
  }

  delete(key: string): void {
    this.signIns.delete(key);
  }
}

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
const DEFAULT_IDLE_MS = 30 * 60_000;
const DEFAULT_MAX_AGE_MS = 8 * 3600_000;

/** The inbox's sign-ins: sign-in, lookup with expiry, sign-out. Time comes from `clock`. */
export class SignIns {
  readonly idleMs: number;
  readonly maxAgeMs: number;
  private readonly store: InboxSignInStore;

  constructor(
    options: InboxSignInOptions = {},
    private readonly clock: () => number,
  ) {
    for (const key of ['idleMs', 'maxAgeMs'] as const) {
      const value = options[key];
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 1000))
        throw new InvalidArgumentError(`signIns.${key} must be a whole number of ms, at least 1000, got ${String(value)}`);
    }
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
    const store = options.store ?? new MemorySignInStore();
    for (const method of ['create', 'get', 'touch', 'delete'] as const) {
      if (typeof store[method] !== 'function') throw new InvalidArgumentError(`signIns.store needs a ${method}() method`);
    }
    this.store = store;
  }

  /** A new sign-in for `credential`; returns the id for the cookie. Always a fresh id (no fixation). */
  async create(credential: string): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const now = this.clock();
    await this.store.create({ key: keyOf(id), credential, createdAt: now, lastSeenAt: now });
    return id;
  }

  /** The live sign-in of a cookie's id, or `undefined`; an expired one is deleted on the way. */
  async find(id: string | undefined): Promise<InboxSignIn | undefined> {
    if (id === undefined || !SESSION_ID.test(id)) return undefined;
    const key = keyOf(id);
    const signIn = await this.store.get(key);
    if (!signIn) return undefined;
    const now = this.clock();
    if (now - signIn.lastSeenAt >= this.idleMs || now - signIn.createdAt >= this.maxAgeMs) {
      await this.store.delete(key);
      return undefined;
    }
    // One write a minute at most per sign-in, so a shared store is not written on every request.
    if (now - signIn.lastSeenAt >= Math.min(60_000, this.idleMs / 4)) await this.store.touch(key, now);
    return signIn;
  }

  /** Ends the sign-in of a cookie's id (sign-out). */
  async revoke(id: string | undefined): Promise<void> {
    if (id === undefined || !SESSION_ID.test(id)) return;
    await this.store.delete(keyOf(id));
  }

  /** Seconds a new sign-in's cookie may live: the absolute lifetime. */
  get cookieMaxAge(): number {
    return Math.floor(this.maxAgeMs / 1000);
  }
}

function keyOf(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('base64url');
}
