import { Watchdog, type Watched } from '../../src/http/watchdog';

// The watchdog keeps what it watches in a list threaded through the items (no Set per
// request): these pin what the list must do, on fake time.

class Item implements Watched {
  watchedBy: Watchdog | undefined = undefined;
  watchPrevious: Watched | undefined = undefined;
  watchNext: Watched | undefined = undefined;
  expired = 0;
  constructor(
    readonly deadline: number,
    private readonly onExpire?: () => void,
  ) {}
  expire(): void {
    this.expired++;
    this.onExpire?.();
  }
}

describe('Watchdog', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const at = (ms: number) => performance.now() + ms;

  it('expires each watched item once its deadline passes, and only those still watched', () => {
    const dog = new Watchdog();
    const items = [100, 50, 300, 200, 50].map((ms) => new Item(at(ms)));
    for (const item of items) dog.watch(item);
    dog.release(items[3] as Item); // the 200 ms one answered in time
    jest.advanceTimersByTime(60);
    expect(items.map((i) => i.expired)).toEqual([0, 1, 0, 0, 1]);
    jest.advanceTimersByTime(50);
    expect(items.map((i) => i.expired)).toEqual([1, 1, 0, 0, 1]);
    jest.advanceTimersByTime(500);
    expect(items.map((i) => i.expired)).toEqual([1, 1, 1, 0, 1]);
    // Released or expired, an item is out of the list: releasing again is harmless.
    for (const item of items) dog.release(item);
    expect(items.every((i) => i.watchedBy === undefined && i.watchNext === undefined && i.watchPrevious === undefined)).toBe(true);
  });

  it('releases from the head, the middle and the tail without losing the others', () => {
    const dog = new Watchdog();
    const items = Array.from({ length: 6 }, (_, i) => new Item(at(100 + i)));
    for (const item of items) dog.watch(item);
    // The list is newest first: items[5] is the head, items[0] the tail.
    for (const i of [5, 2, 0]) dog.release(items[i] as Item);
    jest.advanceTimersByTime(200);
    expect(items.map((i) => i.expired)).toEqual([0, 1, 0, 1, 1, 0]);
  });

  it('an item watched while another expires is timed out too, at its own deadline', () => {
    const dog = new Watchdog();
    const late = new Item(at(500));
    const first = new Item(at(100), () => dog.watch(late));
    dog.watch(first);
    jest.advanceTimersByTime(150);
    expect([first.expired, late.expired]).toEqual([1, 0]);
    jest.advanceTimersByTime(400);
    expect(late.expired).toBe(1);
  });

  it('an expiry that releases another item does not skip the rest', () => {
    const dog = new Watchdog();
    const items: Item[] = [];
    const killer = new Item(at(10), () => dog.release(items[1] as Item));
    items.push(new Item(at(10)), new Item(at(10)), new Item(at(10)));
    dog.watch(items[0] as Item);
    dog.watch(killer);
    dog.watch(items[1] as Item);
    dog.watch(items[2] as Item);
    jest.advanceTimersByTime(20);
    // Every item whose deadline had passed when the timer fired is told, once.
    expect([killer.expired, ...items.map((i) => i.expired)]).toEqual([1, 1, 1, 1]);
  });

  it('leaves no timer holding the process once nothing is watched', () => {
    const dog = new Watchdog();
    const item = new Item(at(1000));
    dog.watch(item);
    const timer = (dog as unknown as { timer: NodeJS.Timeout }).timer;
    expect(timer.hasRef()).toBe(true);
    dog.release(item);
    expect(timer.hasRef()).toBe(false);
    dog.watch(new Item(at(2000)));
    expect(timer.hasRef()).toBe(true);
  });
});
