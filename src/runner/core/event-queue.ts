/**
 * A push-to-pull bridge: the loop pushes events from parallel tool calls, one consumer
 * pulls them with `for await`. Unbounded, because the producer is the run itself and its
 * events are few and small.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private failed = false;
  private error: unknown;

  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.signal();
  }

  close(): void {
    this.ended = true;
    this.signal();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.failed = true;
    this.error = error;
    this.ended = true;
    this.signal();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    let next = 0;
    for (;;) {
      if (next < this.items.length) {
        const item = this.items[next] as T;
        this.items[next++] = undefined as T; // let delivered events be collected
        yield item;
        continue;
      }
      if (this.ended) {
        if (this.failed) throw this.error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
