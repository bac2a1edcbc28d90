import 'reflect-metadata';
import { plainToInstance, Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsEmail,
  IsEnum,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  Validate,
  ValidateIf,
  ValidateNested,
  ValidatorConstraint,
  validateSync,
  type ValidatorConstraintInterface,
  useContainer,
} from 'class-validator';
import fc from 'fast-check';
import { Tool, Toolkit } from 'toolnexus-ts';
import { quickCheckFor } from '../../src/toolkit/quick-check';

// The quick check passes an instance without class-validator's executor (docs/performance.md,
// "Validation without the executor"). What it may never do is pass what class-validator
// refuses, or strip other properties than its whitelist does: these compare the two on the same
// instances, for DTOs with every kind of rule it plans, and show it stands aside for the rest.

const OPTIONS = { whitelist: true, forbidUnknownValues: true, validationError: { target: false, value: false } };

enum Unit {
  C = 'celsius',
  F = 'fahrenheit',
}

@ValidatorConstraint({ name: 'even' })
class Even implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return typeof value === 'number' && value % 2 === 0;
  }
}

/** A constraint that answers with a promise without saying it is async: only `validate` awaits it. */
@ValidatorConstraint({ name: 'laterNo' })
class LaterNo implements ValidatorConstraintInterface {
  validate(): Promise<boolean> {
    return Promise.resolve(false);
  }
}

class Base {
  @IsString() @MaxLength(8) inherited!: string;
}

class Rich extends Base {
  @IsString() @Length(1, 6) city!: string;
  @IsNumber({ allowNaN: false, maxDecimalPlaces: 2 }) @Min(-50) @Max(60) temp!: number;
  @IsOptional() @IsInt() count?: number;
  @IsOptional() @IsEnum(Unit) unit?: Unit;
  @IsIn(['a', 'b']) choice!: string;
  @IsBoolean() flag!: boolean;
  @IsOptional() @IsEmail() email?: string;
  @IsOptional() @Matches(/^[a-z]+$/) slug?: string;
  @ValidateIf((o: Rich) => o.flag === true) @IsDefined() @Validate(Even) whenFlag?: number;
  @IsOptional() @IsArray() @ArrayMaxSize(2) list?: unknown[];
  @Allow() anything?: unknown;
  initial = 'set by the constructor';
}

class Inner {
  @IsString() name!: string;
}
class Nested {
  @ValidateNested() @Type(() => Inner) inner!: Inner;
}
class Grouped {
  @IsString({ groups: ['admin'] }) name!: string;
}
class Each {
  @IsString({ each: true }) names!: string[];
}
class Later {
  @Validate(LaterNo) value!: number;
}

/** A constraint with a service of its own, which only the application's container can give it. */
class Directory {
  known = new Set(['ada']);
}
@ValidatorConstraint({ name: 'knownUser' })
class KnownUser implements ValidatorConstraintInterface {
  constructor(private readonly directory: Directory) {}
  validate(value: unknown): boolean {
    return this.directory.known.has(String(value));
  }
}
class Assign {
  @IsString() @Validate(KnownUser) user!: string;
}

const KEYS = [
  'inherited',
  'city',
  'temp',
  'count',
  'unit',
  'choice',
  'flag',
  'email',
  'slug',
  'whenFlag',
  'list',
  'anything',
  'initial',
  'extra',
  'other',
];

const value = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.integer({ min: -80, max: 80 }),
  fc.double({ min: -80, max: 80, noNaN: false }),
  fc.constantFrom('a', 'b', 'Paris', 'celsius', 'fahrenheit', 'x@y.io', 'abc', 'ABC', '', 'toolong-city-name'),
  fc.string({ maxLength: 10 }),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
);

/** Plain arguments: mostly valid ones, each key sometimes replaced or dropped, and unknown keys. */
const plain = fc
  .record({
    base: fc.constant({ inherited: 'in', city: 'Paris', temp: 21.5, choice: 'a', flag: false }),
    changes: fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 4 }),
    dropped: fc.subarray(KEYS, { maxLength: 3 }),
  })
  .map(({ base, changes, dropped }) => {
    const args: Record<string, unknown> = { ...base, ...changes };
    for (const key of dropped) delete args[key];
    return args;
  });

function outcome<T>(run: () => T): T | 'threw' {
  try {
    return run();
  } catch {
    return 'threw';
  }
}

describe('the quick check', () => {
  it('passes only what class-validator passes, and strips what its whitelist strips', () => {
    const check = quickCheckFor(Rich);
    expect(check).toBeDefined();
    let passed = 0;
    let refused = 0;
    fc.assert(
      fc.property(plain, (args) => {
        const quick = plainToInstance(Rich, args);
        const full = plainToInstance(Rich, args);
        // A constraint that throws (class-validator's IsNumber on -5e-324 with maxDecimalPlaces
        // does) throws from both when the quick check reaches it; when it stops earlier, at a
        // broken rule, the Toolkit asks class-validator, which throws there.
        const ok = outcome(() => check!(quick));
        const errors = outcome(() => validateSync(full, OPTIONS));
        if (ok === 'threw') return expect(errors).toBe('threw');
        if (errors === 'threw') return expect(ok).toBe(false);
        // Every rule here is one the quick check decides exactly: yes when and only when there is no error.
        expect(ok).toBe(errors.length === 0);
        if (ok) {
          passed++;
          expect(Object.keys(quick).sort()).toEqual(Object.keys(full).sort());
          expect({ ...quick }).toEqual({ ...full });
        } else refused++;
      }),
      { numRuns: 2000 },
    );
    // Both sides were exercised.
    expect(passed).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it('stands aside for nested DTOs, groups and each, which only the executor applies', () => {
    expect(quickCheckFor(Nested)).toBeUndefined();
    expect(quickCheckFor(Grouped)).toBeUndefined();
    expect(quickCheckFor(Each)).toBeUndefined();
  });

  it('leaves a constraint that answers with a promise to class-validator, which the Toolkit awaits', async () => {
    const check = quickCheckFor(Later)!;
    expect(check(plainToInstance(Later, { value: 1 }))).toBe(false);

    @Tool({ name: 'later', description: 'A tool whose rule answers later', args: Later })
    class LaterTool {
      run(): string {
        return 'ran';
      }
    }
    const result = await new Toolkit().register(LaterTool).execute('later', { value: 1 });
    expect(result.isError).toBe(true);
    expect(result.output).toContain('invalid arguments for later');
  });

  it('asks the container class-validator is given for each constraint at every call, as the executor does', () => {
    // The plan is made before the application sets its container (a Nest app does at bootstrap).
    const check = quickCheckFor(Assign)!;
    const directory = new Directory();
    useContainer(
      {
        get: <T>(cls: new (...args: never[]) => T): T =>
          cls === (KnownUser as unknown) ? (new KnownUser(directory) as T) : (undefined as T),
      },
      { fallback: true },
    );
    try {
      expect(check(plainToInstance(Assign, { user: 'ada' }))).toBe(true);
      expect(check(plainToInstance(Assign, { user: 'eve' }))).toBe(false);
      expect(validateSync(plainToInstance(Assign, { user: 'eve' }), OPTIONS)).toHaveLength(1);
    } finally {
      useContainer({ get: () => undefined }, { fallback: true });
    }
  });

  it('plans again when a rule is added to the class or a class it extends after the plan was made', () => {
    class Parent {
      @IsString() name!: string;
    }
    class Child extends Parent {
      @IsOptional() count?: unknown;
    }
    const check = quickCheckFor(Child)!;
    expect(check(plainToInstance(Child, { name: 'a', count: 'x' }))).toBe(true);
    // A decorator applied at run time, to the child and then to the parent.
    IsInt()(Child.prototype, 'count');
    expect(check(plainToInstance(Child, { name: 'a', count: 'x' }))).toBe(false);
    expect(validateSync(plainToInstance(Child, { name: 'a', count: 'x' }), OPTIONS)).toHaveLength(1);
    MaxLength(1)(Parent.prototype, 'name');
    expect(check(plainToInstance(Child, { name: 'ab', count: 1 }))).toBe(false);
    expect(check(plainToInstance(Child, { name: 'a', count: 1 }))).toBe(true);
    // One only the executor applies: class-validator from then on.
    ValidateNested()(Parent.prototype, 'name');
    expect(check(plainToInstance(Child, { name: 'a', count: 1 }))).toBe(false);
  });

  it('calls a condition as the executor does, with the rule constraints as this', () => {
    const seen: unknown[] = [];
    class Conditional {
      @ValidateIf(function (this: unknown) {
        seen.push(this);
        return true;
      })
      @IsString()
      name!: string;
    }
    quickCheckFor(Conditional)!(plainToInstance(Conditional, { name: 'a' }));
    validateSync(plainToInstance(Conditional, { name: 'a' }), OPTIONS);
    expect(seen).toHaveLength(2);
    expect(Array.isArray(seen[0])).toBe(true);
    expect(seen[0]).toBe(seen[1]);
  });

  it('gives the Toolkit the same answers, words and all, as before', async () => {
    @Tool({ name: 'rich', description: 'Many rules', args: Rich })
    class RichTool {
      run(args: Rich): Rich {
        return args;
      }
    }
    const toolkit = new Toolkit().register(RichTool);
    const good = await toolkit.execute('rich', { inherited: 'in', city: 'Paris', temp: 21.5, choice: 'a', flag: false, extra: 1 });
    expect(good.isError).toBe(false);
    expect(JSON.parse(good.output)).toEqual({ inherited: 'in', city: 'Paris', temp: 21.5, choice: 'a', flag: false });
    const bad = await toolkit.execute('rich', { inherited: 'in', city: '', temp: 99, choice: 'c', flag: true });
    expect(bad.isError).toBe(true);
    expect(bad.output).toContain('city must be longer than or equal to 1 characters');
    expect(bad.output).toContain('temp must not be greater than 60');
    expect(bad.output).toContain('choice must be one of the following values: a, b');
    expect(bad.output).toContain('whenFlag');
  });
});
