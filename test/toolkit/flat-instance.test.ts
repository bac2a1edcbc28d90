import 'reflect-metadata';
import { plainToInstance, Transform, Expose } from 'class-transformer';
import { IsNumber, IsOptional, IsString } from 'class-validator';
import fc from 'fast-check';
import { Tool, Toolkit } from 'toolnexus-ts';
import { flatInstance } from '../../src/toolkit/arguments';

// The Toolkit builds a flat DTO's instance without class-transformer when class-transformer
// has nothing recorded for the class (docs/performance.md, "Where the time goes"). These pin
// that shortcut to what plainToInstance builds, key by key, for the classes it is taken for.

class Base {
  @IsString() inherited!: string;
  baseMethod(): string {
    return 'base';
  }
}

class Shapes extends Base {
  @IsString() name!: string;
  @IsOptional() @IsNumber() count?: number;
  initial = 'set by the constructor';
  arrow = (): string => 'own function field';
  private hidden = 1;
  get computed(): number {
    return this.hidden;
  }
  get settable(): number {
    return this.hidden;
  }
  set settable(value: number) {
    this.hidden = value;
  }
  method(): string {
    return 'method';
  }
}

class Plain {
  @IsString() a!: string;
  @IsNumber() b!: number;
}

const KEYS = [
  'name',
  'count',
  'inherited',
  'initial',
  'arrow',
  'hidden',
  'computed',
  'settable',
  'method',
  'baseMethod',
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'a',
  'b',
  'extra',
];
const primitive = fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined));
const flatObject = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...KEYS), fc.string()), primitive), { maxLength: 12 }).map((entries) => {
  // Defined as own data properties, as JSON.parse makes them (even `__proto__`).
  const value: Record<string, unknown> = {};
  for (const [key, item] of entries)
    Object.defineProperty(value, key, { value: item, enumerable: true, writable: true, configurable: true });
  return value;
});

function sameInstance(ours: object | undefined, theirs: object): void {
  expect(ours).toBeDefined();
  expect(Object.getPrototypeOf(ours)).toBe(Object.getPrototypeOf(theirs));
  expect(Object.keys(ours as object)).toEqual(Object.keys(theirs));
  const a = Object.getOwnPropertyDescriptors(ours);
  const b = Object.getOwnPropertyDescriptors(theirs);
  for (const key of Object.keys(b)) {
    const x = a[key]?.value as unknown;
    const y = b[key]?.value as unknown;
    // A function field is made anew by each constructor call: compare what it is, not which.
    if (typeof y === 'function') expect(typeof x).toBe('function');
    else expect(Object.is(x, y)).toBe(true);
  }
}

describe('flatInstance: plainToInstance without class-transformer, for flat values', () => {
  it('builds what plainToInstance builds, for any flat object (accessors, methods, initialisers, inherited and prototype keys)', () => {
    fc.assert(
      fc.property(flatObject, fc.constantFrom<new () => object>(Shapes, Plain, Base), (value, dto) => {
        sameInstance(flatInstance(dto, value), plainToInstance(dto, value));
      }),
      { numRuns: 500 },
    );
  });

  it('declines a value holding an object or an array (those take the full path)', () => {
    expect(flatInstance(Plain, { a: 'x', b: { nested: true } })).toBeUndefined();
    expect(flatInstance(Plain, { a: ['x'], b: 1 })).toBeUndefined();
  });
});

describe('a DTO class-transformer has something recorded for keeps the full plainToInstance', () => {
  class Trimmed {
    @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value)) @IsString() text!: string;
  }
  class Renamed {
    @Expose({ name: 'full_name' }) @IsString() fullName!: string;
  }
  class TrimmedChild extends Trimmed {
    @IsNumber() n!: number;
  }
  const seen: unknown[] = [];
  @Tool({ name: 'trim', description: 'Echoes trimmed text', args: Trimmed })
  class TrimTool {
    run(args: Trimmed) {
      seen.push(args);
      return args.text;
    }
  }
  @Tool({ name: 'rename', description: 'Echoes a renamed field', args: Renamed })
  class RenameTool {
    run(args: Renamed) {
      return args.fullName;
    }
  }
  @Tool({ name: 'child', description: 'Inherits a transform', args: TrimmedChild })
  class ChildTool {
    run(args: TrimmedChild) {
      return `${args.text}:${args.n}`;
    }
  }
  const toolkit = new Toolkit().register(TrimTool, RenameTool, ChildTool);

  it('applies @Transform, @Expose names and an inherited @Transform as before', async () => {
    expect(await toolkit.execute('trim', '{"text":"  padded  "}')).toEqual({ output: 'padded', isError: false });
    expect(seen[0]).toBeInstanceOf(Trimmed);
    expect(await toolkit.execute('rename', '{"full_name":"Ada Lovelace"}')).toEqual({ output: 'Ada Lovelace', isError: false });
    expect(await toolkit.execute('child', '{"text":" x ","n":2}')).toEqual({ output: 'x:2', isError: false });
  });
});

describe('a flat DTO through the Toolkit', () => {
  class Args {
    @IsString() city!: string;
    @IsNumber() n!: number;
  }
  const runs: unknown[] = [];
  @Tool({ name: 'flat', description: 'A flat DTO', args: Args })
  class FlatTool {
    run(args: Args) {
      runs.push(args);
      return `${args.city}:${args.n}`;
    }
  }
  const toolkit = new Toolkit().register(FlatTool);

  it('runs with an instance of the DTO, unknown keys stripped, wrong types refused', async () => {
    expect(await toolkit.execute('flat', '{"city":"Paris","n":3,"extra":true}')).toEqual({ output: 'Paris:3', isError: false });
    expect(runs[0]).toBeInstanceOf(Args);
    expect(Object.keys(runs[0] as object)).toEqual(['city', 'n']);
    const bad = await toolkit.execute('flat', '{"city":5,"n":"x"}');
    expect(bad.isError).toBe(true);
    expect(bad.output).toMatch(/city: city must be a string.*n: n must be a number/);
  });
});
