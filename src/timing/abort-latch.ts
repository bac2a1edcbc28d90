/**
 * An abort that costs nothing until somebody looks at it. On Node 20, making an
 * `AbortSignal` costs about 5 µs (an `EventTarget` per signal), more than the rest of a
 * durable replay's bookkeeping together, and most tools never read `ctx.signal`. A latch
 * records the abort and tells its own listeners; `signal` makes the real `AbortSignal` on
 * first read, already aborted when the latch is.
 */
export class AbortLatch {
  private controller: AbortController | undefined;
  private listeners: Array<(reason: unknown) => void> | undefined;
  private abortedWith: { reason: unknown } | undefined;
  private reader: ReadSignal | undefined;

  /** The getter {@link withLatch} installs as a context's `signal`; it names its latch. Made on first use: most latches never need it. */
  get readSignal(): ReadSignal {
    return (this.reader ??= Object.assign((): AbortSignal => this.signal, { latch: this }));
  }

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  /** A real `AbortSignal` that follows this latch, made on first read. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener(reason);
  }

  /** Calls `listener` once, when the latch aborts; returns what removes it. */
  onAbort(listener: (reason: unknown) => void): () => void {
    (this.listeners ??= []).push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at >= 0) this.listeners?.splice(at, 1);
    };
  }
}

/** Either thing a call can be cancelled by: what {@link watchOf} finds on a context. */
export type AbortWatch = AbortLatch | AbortSignal;

/** A `signal` getter that knows the latch it reads. */
type ReadSignal = ((this: void) => AbortSignal) & { readonly latch: AbortLatch };

/**
 * `ctx` with its `signal` read lazily from `latch` (a getter that names the latch, so the
 * Toolkit can watch the latch without making the signal). A copy of the context (a spread
 * reads the getter) carries the real signal instead, which {@link watchOf} then uses.
 */
export function withLatch<TContext extends { signal?: AbortSignal }>(ctx: TContext, latch: AbortLatch): TContext {
  Object.defineProperty(ctx, 'signal', { get: latch.readSignal, enumerable: true, configurable: true });
  return ctx;
}

/**
 * `{ ...ctx, ...extra }` without reading a lazy `signal`: a spread reads the getter, and so makes
 * the `AbortSignal` the latch is there to avoid (a durable replay's context has one). The copy
 * keeps the getter, and with it the latch, unless `extra` gives a `signal` of its own.
 */
export function spreadContext<TContext extends { signal?: AbortSignal }>(ctx: TContext, extra: Partial<TContext>): TContext {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- only read for its `latch`, never called
  const getter: unknown = Object.getOwnPropertyDescriptor(ctx, 'signal')?.get;
  const latch = (getter as Partial<ReadSignal> | undefined)?.latch;
  if (latch === undefined || 'signal' in extra) return { ...ctx, ...extra };
  const copy: Record<PropertyKey, unknown> = {};
  for (const key of Reflect.ownKeys(ctx))
    if (key !== 'signal' && Object.prototype.propertyIsEnumerable.call(ctx, key)) copy[key] = (ctx as Record<PropertyKey, unknown>)[key];
  return withLatch(Object.assign(copy, extra) as TContext, latch);
}

/** What cancels a call made with `ctx`: the latch behind its `signal` getter, else its signal. */
export function watchOf(ctx: { signal?: AbortSignal } | undefined): AbortWatch | undefined {
  if (ctx === undefined) return undefined;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- only read for its `latch`, never called
  const getter: unknown = Object.getOwnPropertyDescriptor(ctx, 'signal')?.get;
  return (getter as Partial<ReadSignal> | undefined)?.latch ?? ctx.signal;
}

/** Calls `listener` once when `watch` aborts (at once when it already has); returns what removes it. */
export function onAbortOf(watch: AbortWatch, listener: (reason: unknown) => void): () => void {
  if (watch.aborted) {
    listener(watch.reason);
    return () => undefined;
  }
  if (watch instanceof AbortLatch) return watch.onAbort(listener);
  const handler = (): void => listener(watch.reason);
  watch.addEventListener('abort', handler, { once: true });
  return () => watch.removeEventListener('abort', handler);
}
