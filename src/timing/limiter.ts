/**
 * How many of a set of tasks run at once. A task beyond the limit waits for a running one to
 * end, first come first served; a limit of `Infinity` runs everything at once.
 */
export class Limiter {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

/** `map(items, task)` with at most `limit` tasks running at once; the results in the items' order. */
export function mapLimited<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  if (limit >= items.length) return Promise.all(items.map(task));
  const limiter = new Limiter(limit);
  return Promise.all(items.map((item, index) => limiter.run(() => task(item, index))));
}
