import 'reflect-metadata';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsInt, IsString, ValidateNested } from 'class-validator';
import { InvalidArgumentError, Tool, Toolkit } from 'toolnexus-ts';

/** Issue 10: what a model sends is bounded before class-validator walks it. */
class Item {
  @IsString() sku!: string;
  @IsInt() qty!: number;
}

class CartArgs {
  @ValidateNested({ each: true }) @ArrayMaxSize(10) @Type(() => Item) items!: Item[];
}

class BagArgs {
  @ValidateNested({ each: true }) @Type(() => Item) items!: Item[];
}

let runs = 0;

@Tool({ name: 'cart', description: 'A cart of at most ten items', args: CartArgs })
class CartTool {
  run(args: CartArgs) {
    runs++;
    return `${args.items.length} items`;
  }
}

@Tool({ name: 'bag', description: 'Any number of items', args: BagArgs })
class BagTool {
  run(args: BagArgs) {
    return `${args.items.length} items`;
  }
}

/** Lifts the Toolkit's own bounds, to show what the DTO's bounds do on their own. */
const roomy = { maxArgumentBytes: 64 * 1024 * 1024, maxArrayItems: 1_000_000 };

function manyItems(bytes: number): string {
  const item = JSON.stringify({ sku: 'sku-0001', qty: 1 });
  return JSON.stringify({ items: new Array<unknown>(Math.ceil(bytes / (item.length + 1))).fill({ sku: 'sku-0001', qty: 1 }) });
}

/** The result and the best wall time of three runs (one run can meet a GC pause or a busy CPU). */
async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  let best = Infinity;
  let value: T | undefined;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    value = await work();
    best = Math.min(best, performance.now() - started);
  }
  return { value: value as T, ms: best };
}

describe('argument bounds', () => {
  const big = manyItems(1.3 * 1024 * 1024);

  it('@ArrayMaxSize(10) refuses a 1.3 MB array without walking its items', async () => {
    const toolkit = new Toolkit(roomy).register(CartTool);
    expect(await toolkit.execute('cart', { items: [{ sku: 'a', qty: 1 }] })).toEqual({ output: '1 items', isError: false });
    runs = 0;
    const { value, ms } = await timed(() => toolkit.execute('cart', big));
    expect(value).toEqual({ output: 'invalid arguments for cart: items: items must contain no more than 10 elements', isError: true });
    expect(ms).toBeLessThan(100);
    expect(runs).toBe(0);
  });

  it('by default, arguments over 1 MB are refused before they are parsed', async () => {
    const toolkit = new Toolkit().register(BagTool);
    const { value, ms } = await timed(() => toolkit.execute('bag', big));
    expect(value).toEqual({ output: 'invalid arguments for bag: arguments are larger than 1,048,576 bytes', isError: true });
    expect(ms).toBeLessThan(100);
  });

  it('an object (not a JSON text) over the byte limit is refused too', async () => {
    const toolkit = new Toolkit({ maxArgumentBytes: 1000 }).register(BagTool);
    const result = await toolkit.execute('bag', { items: [{ sku: 'x'.repeat(2000), qty: 1 }] });
    expect(result).toEqual({ output: 'invalid arguments for bag: arguments are larger than 1,000 bytes', isError: true });
  });

  it('by default, an array over 10,000 items is refused before validation', async () => {
    const toolkit = new Toolkit().register(BagTool);
    const result = await toolkit.execute('bag', { items: new Array<unknown>(10_001).fill(1) });
    expect(result).toEqual({ output: 'invalid arguments for bag: an array has 10,001 items, more than the 10,000 allowed', isError: true });
    expect(await toolkit.execute('bag', { items: new Array<unknown>(3).fill({ sku: 'a', qty: 1 }) })).toEqual({
      output: '3 items',
      isError: false,
    });
  });

  it('300 KB of {} items gives a short error: the first failures and a count of the rest', async () => {
    const toolkit = new Toolkit(roomy).register(BagTool);
    const args = JSON.stringify({ items: new Array<unknown>(100_000).fill({}) });
    expect(args.length).toBeGreaterThan(300_000);
    const result = await toolkit.execute('bag', args);
    expect(result.isError).toBe(true);
    expect(result.output.length).toBeLessThan(2000);
    expect(result.output).toMatch(
      /^invalid arguments for bag: items\.0\.sku: sku must be a string; items\.0\.qty: qty must be an integer number; .*; … and 199,980 more$/,
    );
  });

  it('maxErrorCount sets how many failures are listed', async () => {
    const toolkit = new Toolkit({ maxErrorCount: 1 }).register(BagTool);
    const result = await toolkit.execute('bag', { items: [{}, {}] });
    expect(result.output).toBe('invalid arguments for bag: items.0.sku: sku must be a string; … and 3 more');
  });

  it('200,000 failing items give an error result, not a stack overflow', async () => {
    const toolkit = new Toolkit(roomy).register(BagTool);
    const wrongShape = await toolkit.execute('bag', { items: new Array<unknown>(200_000).fill('x') });
    expect(wrongShape.output).toMatch(/^invalid arguments for bag: items\.0: 0 must be an object; .* … and 199,980 more$/);
    const failing = await toolkit.execute('bag', { items: new Array<unknown>(200_000).fill({ sku: 1, qty: 1 }) });
    expect(failing.output).toMatch(/^invalid arguments for bag: items\.0\.sku: sku must be a string; .* … and 199,980 more$/);
  });

  it('refuses limits that are not positive numbers', () => {
    expect(() => new Toolkit({ maxArrayItems: 0 })).toThrow(InvalidArgumentError);
    expect(() => new Toolkit({ maxArgumentBytes: Number.NaN })).toThrow('maxArgumentBytes must be a number of at least 1');
    expect(new Toolkit({ maxArgumentBytes: Infinity, maxArrayItems: Infinity }).register(BagTool).has('bag')).toBe(true);
  });
});
