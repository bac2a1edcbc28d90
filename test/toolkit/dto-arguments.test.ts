import 'reflect-metadata';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Min, ValidateNested } from 'class-validator';
import { Tool, Toolkit, ToolRegistrationError } from 'toolnexus-ts';

class Merchant {
  @IsString() name!: string;
}

class PayArgs {
  @ValidateNested() @Type(() => Merchant) merchant!: Merchant;
  @IsInt() @Min(1) cents!: number;
  @IsString() currency!: string;
}

const ran: object[] = [];

@Tool({ name: 'pay', description: 'Pay a merchant', args: PayArgs })
class PayTool {
  run(args: PayArgs) {
    ran.push(args);
    return `paid ${args.merchant.name}`;
  }
}

class Line {
  @IsString() sku!: string;
}

class OrderArgs {
  @IsOptional() @ValidateNested() @Type(() => Merchant) merchant?: Merchant;
  @ValidateNested({ each: true }) @Type(() => Line) lines!: Line[];
}

@Tool({ name: 'order', description: 'Order lines', args: OrderArgs })
class OrderTool {
  run(args: OrderArgs) {
    return `${args.lines.length} lines`;
  }
}

const toolkit = new Toolkit().register(PayTool, OrderTool);

beforeEach(() => {
  ran.length = 0;
});

describe('A: every failure is reported, not only the first shape problem', () => {
  it('a string for a nested object, a bad amount and a good currency give two failures', async () => {
    const result = await toolkit.execute('pay', { merchant: 'Hotel', cents: 'x', currency: 'GBP' });
    expect(result.isError).toBe(true);
    expect(result.output).toBe(
      'invalid arguments for pay: merchant: merchant must be an object; cents: cents must not be less than 1, cents must be an integer number',
    );
  });

  it('problems inside a nested object and beside it are all listed', async () => {
    const result = await toolkit.execute('pay', { merchant: { name: 7 }, cents: 0, currency: 3 });
    expect(result.output).toContain('merchant.name: name must be a string');
    expect(result.output).toContain('cents: cents must not be less than 1');
    expect(result.output).toContain('currency: currency must be a string');
  });

  it('an array where an object is declared and a wrong item are both reported', async () => {
    const result = await toolkit.execute('order', { merchant: [], lines: [{ sku: 'a' }, 'b', { sku: 1 }] });
    expect(result.output).toBe(
      'invalid arguments for order: merchant: merchant must be an object; lines.1: 1 must be an object; lines.2.sku: sku must be a string',
    );
  });
});

describe('B: a required nested object is required by validation as by the schema', () => {
  it('is in the schema required list', () => {
    expect(toolkit.get('pay')?.inputSchema.required).toEqual(['merchant', 'cents', 'currency']);
  });

  it('execute with no merchant does not run the tool', async () => {
    const result = await toolkit.execute('pay', { cents: 5, currency: 'GBP' });
    expect(result).toEqual({ output: 'invalid arguments for pay: merchant: merchant should not be null or undefined', isError: true });
    expect(ran).toEqual([]);
  });

  it('execute with {} lists every missing property and does not run the tool', async () => {
    const result = await toolkit.execute('pay', {});
    expect(result.isError).toBe(true);
    expect(result.output).toContain('merchant: merchant should not be null or undefined');
    expect(result.output).toContain('currency: currency must be a string');
    expect(ran).toEqual([]);
  });

  it('null is refused as missing; a required nested array is required too', async () => {
    expect((await toolkit.execute('pay', { merchant: null, cents: 5, currency: 'GBP' })).output).toBe(
      'invalid arguments for pay: merchant: merchant should not be null or undefined',
    );
    expect((await toolkit.execute('order', {})).output).toBe('invalid arguments for order: lines: lines should not be null or undefined');
  });

  it('an @IsOptional() nested object may be left out', async () => {
    expect(await toolkit.execute('order', { lines: [] })).toEqual({ output: '0 lines', isError: false });
    expect(await toolkit.execute('pay', { merchant: { name: 'Inn' }, cents: 5, currency: 'GBP' })).toEqual({
      output: 'paid Inn',
      isError: false,
    });
  });
});

describe('C: @ValidateNested() without @Type is refused at register', () => {
  it('names the class, the property and the fix', () => {
    class Inner {
      @IsString() code!: string;
    }
    class OuterArgs {
      @ValidateNested() inner!: Inner;
    }
    @Tool({ name: 'outer', description: 'x', args: OuterArgs })
    class OuterTool {
      run() {
        return 'ok';
      }
    }
    const register = () => new Toolkit().register(OuterTool);
    expect(register).toThrow(ToolRegistrationError);
    expect(register).toThrow('OuterArgs.inner has @ValidateNested() but no @Type');
    expect(register).toThrow('add @Type(() => Inner) from class-transformer to OuterArgs.inner');
  });

  it('for an array too', () => {
    class Item {
      @IsString() code!: string;
    }
    class ListArgs {
      @ValidateNested({ each: true }) items!: Item[];
    }
    @Tool({ name: 'list', description: 'x', args: ListArgs })
    class ListTool {
      run() {
        return 'ok';
      }
    }
    expect(() => new Toolkit().register(ListTool)).toThrow(/ListArgs\.items has @ValidateNested\(\) but no @Type.*add @Type/);
  });
});

describe('D: a second copy of class-transformer is named at register', () => {
  it('when the @Type came from another copy, the error says so and where it is', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolnexus-second-copy-'));
    try {
      const copy = join(dir, 'node_modules', 'class-transformer');
      cpSync(join(__dirname, '..', '..', 'node_modules', 'class-transformer'), copy, { recursive: true });
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the point is a second, separately loaded copy
      const second = require(join(copy, 'cjs', 'index.js')) as typeof import('class-transformer');
      class Inner {
        @IsString() code!: string;
      }
      class CopyArgs {
        @ValidateNested() @second.Type(() => Inner) inner!: Inner;
      }
      @Tool({ name: 'copy', description: 'x', args: CopyArgs })
      class CopyTool {
        run() {
          return 'ok';
        }
      }
      const register = () => new Toolkit().register(CopyTool);
      expect(register).toThrow(ToolRegistrationError);
      expect(register).toThrow('CopyArgs.inner has @ValidateNested() and a @Type from a second copy of class-transformer');
      expect(register).toThrow(copy);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('G: a tool whose constructor needs arguments, with no resolver', () => {
  class Bank {
    balance() {
      return 3;
    }
  }

  it('is refused at register, naming the class and suggesting a resolver', () => {
    @Tool({ name: 'balance', description: 'x' })
    class BalanceTool {
      constructor(private readonly bank: Bank) {}
      run() {
        return this.bank.balance();
      }
    }
    const register = () => new Toolkit().register(BalanceTool);
    expect(register).toThrow(ToolRegistrationError);
    expect(register).toThrow('class BalanceTool takes 1 constructor argument and this Toolkit has no resolver');
    expect(register).toThrow('resolver');
    const bank = new Bank();
    expect(new Toolkit({ resolver: (cls) => new cls(bank) }).register(BalanceTool).has('balance')).toBe(true);
    expect(new Toolkit().register(new BalanceTool(bank)).has('balance')).toBe(true);
  });

  it('also when the constructor is inherited from a base class', () => {
    abstract class BankTool {
      constructor(protected readonly bank: Bank) {}
    }
    @Tool({ name: 'inherited', description: 'x' })
    class InheritedTool extends BankTool {
      run() {
        return this.bank.balance();
      }
    }
    expect(() => new Toolkit().register(InheritedTool)).toThrow('class InheritedTool takes 1 constructor argument');
  });

  it('a subclass with its own constructor taking nothing is fine', async () => {
    abstract class BankTool {
      constructor(protected readonly bank: Bank) {}
    }
    @Tool({ name: 'own', description: 'x' })
    class OwnTool extends BankTool {
      constructor() {
        super(new Bank());
      }
      run() {
        return this.bank.balance();
      }
    }
    expect(await new Toolkit().register(OwnTool).execute('own', {})).toEqual({ output: '3', isError: false });
  });
});
