import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  ArrayMinSize,
  ArrayNotEmpty,
  ArrayUnique,
  Equals,
  IsArray,
  IsBoolean,
  IsDate,
  IsDateString,
  IsEmail,
  IsEnum,
  IsIn,
  IsInt,
  IsISO8601,
  IsNegative,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsPositive,
  IsString,
  IsUrl,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import fc from 'fast-check';
import { Tool, Toolkit, type JsonSchema } from 'toolnexus-ts';

/**
 * One rule for schema and validation (issue 27, docs/tools.md): for every class-validator
 * decorator the schema generator knows, a DTO with that decorator on one property `v` is
 * registered, and
 *   - every value generated from the schema `v` is shown is accepted by validation;
 *   - every value validation accepts is allowed by the schema (so a value the schema refuses
 *     is refused by validation);
 *   - every value the schema allows is accepted, where the schema can say it: a `format`
 *     (email, uri, uuid, date-time) is only a hint in JSON Schema, checked one way only.
 * Runs on class-validator 0.14 and, through the CI's alias run, 0.15.
 */

enum Priority {
  Low = 'low',
  High = 'high',
}
enum Level {
  One = 1,
  Two = 2,
}
class Inner {
  @IsString() name!: string;
}

/** The cases, one DTO class each: the decorators on `v` and what the test may not judge. */
interface Case {
  readonly name: string;
  readonly dto: new () => object;
  /** Values worth trying beyond random JSON: the edges of this constraint. */
  readonly edges?: readonly unknown[];
}

const cases: Case[] = [];
function add(name: string, dto: new () => object, edges?: readonly unknown[]): void {
  cases.push({ name, dto, edges });
}

// One class per decorator. Decorators are applied by hand so each case stays a line.
function dtoWith(...decorators: PropertyDecorator[]): new () => object {
  class Dto {
    v!: unknown;
  }
  for (const decorate of decorators) decorate(Dto.prototype, 'v');
  return Dto;
}

add('IsString', dtoWith(IsString()), ['', 'x', 1]);
add('IsNumber', dtoWith(IsNumber()), [0, 1.5, -3, '1']);
add('IsInt', dtoWith(IsInt()), [0, 1, 1.5, -7, '1']);
add('IsBoolean', dtoWith(IsBoolean()), [true, false, 'true', 0]);
add('IsObject', dtoWith(IsObject()), [{}, { a: 1 }, [], null]);
add('IsArray', dtoWith(IsArray()), [[], [1, 'a'], {}, 'a']);
add(
  'IsDate with @Type(() => Date)',
  dtoWith(
    IsDate(),
    Type(() => Date),
  ),
  ['2024-01-02T03:04:05.000Z', 'not a date', true],
);
add('IsDateString', dtoWith(IsDateString()), ['2024-01-02T03:04:05Z', '2024-13-45', 5]);
add('IsISO8601', dtoWith(IsISO8601()), ['2024-01-02T03:04:05Z', 'yesterday', 5]);
add('IsEmail', dtoWith(IsEmail()), ['a@example.com', 'a@', 5]);
add('IsUrl', dtoWith(IsUrl()), ['https://example.com/a', 'not a url', 5]);
add('IsUUID', dtoWith(IsUUID()), ['6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'nope', 5]);
add('IsEnum (string enum)', dtoWith(IsEnum(Priority)), ['low', 'high', 'Low', 'mid', 1]);
add('IsEnum (numeric enum)', dtoWith(IsEnum(Level)), [1, 2, 3, 'One', 'Two', '1']);
add('IsIn', dtoWith(IsIn(['red', 'green'])), ['red', 'blue', 1]);
add('IsIn (numbers)', dtoWith(IsIn([1, 2])), [1, 3, '1']);
add('Equals', dtoWith(Equals('yes')), ['yes', 'no', true]);
add('Min', dtoWith(Min(3)), [3, 2.99, 4, '5', true]);
add('Max', dtoWith(Max(3)), [3, 3.01, -4, '1']);
add('IsPositive', dtoWith(IsPositive()), [0, 1e-9, -1, '2']);
add('IsNegative', dtoWith(IsNegative()), [0, -1e-9, 1, '-2']);
add('MinLength', dtoWith(MinLength(2)), ['a', 'ab', 12, ['a', 'b']]);
add('MaxLength', dtoWith(MaxLength(2)), ['abc', 'ab', 123]);
add('Length', dtoWith(Length(1, 3)), ['', 'a', 'abcd', 1]);
add('IsNotEmpty', dtoWith(IsNotEmpty()), ['', 'a', 0, false, [], {}]);
add('IsString + IsNotEmpty', dtoWith(IsString(), IsNotEmpty()), ['', 'a', 1]);
add('Matches', dtoWith(Matches(/^[A-Z]{3}$/)), ['GBP', 'gbp', 'GBPX', 5]);
add('IsArray + ArrayMinSize', dtoWith(IsArray(), ArrayMinSize(2)), [[1], [1, 2], 'ab']);
add('ArrayMinSize', dtoWith(ArrayMinSize(1)), [[], [1], 'a', {}]);
add('ArrayMaxSize', dtoWith(ArrayMaxSize(2)), [[1, 2, 3], [1], 'abc']);
add('ArrayNotEmpty', dtoWith(ArrayNotEmpty()), [[], [0], 'x']);
add('ArrayUnique', dtoWith(ArrayUnique()), [[1, 1], [1, 2], [{ a: 1 }, { a: 1 }], [[1], [1]], 'aa']);
add('IsArray + IsString each', dtoWith(IsArray(), IsString({ each: true })), [[], ['a'], [1], 'a']);
add('IsArray + IsInt each', dtoWith(IsArray(), IsInt({ each: true })), [[1, 2], [1.5], 1]);
add('IsArray + IsEnum each', dtoWith(IsArray(), IsEnum(Level, { each: true })), [[1], ['One'], [3]]);
add('IsArray + MaxLength each', dtoWith(IsArray(), MaxLength(2, { each: true })), [['ab'], ['abc'], [1]]);
add('IsOptional + IsString', dtoWith(IsOptional(), IsString()), ['a', 1]);
add('Allow', dtoWith(Allow()), ['a', 1, null, [], {}]);
add(
  'ValidateNested',
  dtoWith(
    ValidateNested(),
    Type(() => Inner),
  ),
  [{ name: 'a' }, { name: 1 }, {}, [], 'a', [{ name: 'a' }]],
);
add(
  'IsArray + ValidateNested each',
  dtoWith(
    IsArray(),
    ValidateNested({ each: true }),
    Type(() => Inner),
  ),
  [[{ name: 'a' }], [{}], [1], {}],
);

/** Whether JSON Schema `schema` allows `value` (the keywords the generator emits). */
function allows(schema: JsonSchema, value: unknown): boolean {
  if (schema.enum !== undefined && !schema.enum.some((e) => e === value)) return false;
  if (Object.hasOwn(schema, 'const') && schema.const !== value) return false;
  switch (schema.type) {
    case undefined:
      break;
    case 'string':
      if (typeof value !== 'string') return false;
      break;
    case 'number':
      if (typeof value !== 'number') return false;
      break;
    case 'integer':
      if (!Number.isInteger(value)) return false;
      break;
    case 'boolean':
      if (typeof value !== 'boolean') return false;
      break;
    case 'array':
      if (!Array.isArray(value)) return false;
      break;
    case 'object':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
      break;
    default:
      throw new Error(`the generator emitted a type this test cannot read: ${JSON.stringify(schema.type)}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return false;
    if (schema.maximum !== undefined && value > schema.maximum) return false;
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) return false;
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) return false;
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) return false;
    if (schema.maxLength !== undefined && length > schema.maxLength) return false;
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) return false;
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) return false;
    if (schema.maxItems !== undefined && value.length > schema.maxItems) return false;
    if (schema.uniqueItems === true && new Set(value.map((v) => canonical(v))).size !== value.length) return false;
    if (schema.items !== undefined && !value.every((item) => allows(schema.items as JsonSchema, item))) return false;
  }
  if (schema.properties !== undefined && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (record[key] === undefined) return false;
    for (const [key, child] of Object.entries(record)) {
      const declared = schema.properties[key];
      if (declared === undefined) continue; // dropped by whitelisting, as the toolkit does
      if (!allows(declared, child)) return false;
    }
  }
  return true;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${k}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Whether the schema has a keyword this test checks only one way (see the file header). */
function hasFormat(schema: JsonSchema): boolean {
  return schema.format !== undefined || (schema.items !== undefined && hasFormat(schema.items));
}

const isoDate = fc
  .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2999-12-31T23:59:59Z'), noInvalidDate: true })
  .map((d) => d.toISOString());
const FORMATS: Record<string, fc.Arbitrary<string>> = {
  'date-time': isoDate,
  email: fc
    .tuple(fc.stringMatching(/^[a-z0-9]{1,20}$/), fc.stringMatching(/^[a-z][a-z0-9]{0,20}$/), fc.constantFrom('com', 'org', 'io'))
    .map(([user, host, tld]) => `${user}@${host}.${tld}`),
  uri: fc
    .tuple(fc.constantFrom('http', 'https'), fc.stringMatching(/^[a-z][a-z0-9]{0,20}$/), fc.stringMatching(/^[a-z0-9/]{0,20}$/))
    .map(([scheme, host, path]) => `${scheme}://${host}.com/${path}`),
  uuid: fc.uuid(),
};

/** Values JSON Schema `schema` allows (the keywords the generator emits). */
function fromSchema(schema: JsonSchema): fc.Arbitrary<unknown> {
  if (schema.enum !== undefined) return fc.constantFrom(...schema.enum);
  if (Object.hasOwn(schema, 'const')) return fc.constant(schema.const);
  if (schema.format !== undefined) {
    const format = FORMATS[schema.format];
    if (format === undefined) throw new Error(`no generator for format ${schema.format}`);
    return format;
  }
  switch (schema.type) {
    case 'string':
      if (schema.pattern !== undefined) return fc.stringMatching(new RegExp(schema.pattern));
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: schema.maxLength ?? 30, unit: 'grapheme-ascii' });
    case 'integer':
      return fc.integer({
        min: Math.ceil(schema.minimum ?? (schema.exclusiveMinimum ?? -1e9 - 1) + 1),
        max: Math.floor(schema.maximum ?? (schema.exclusiveMaximum ?? 1e9 + 1) - 1),
      });
    case 'number':
      return fc
        .double({
          min: schema.minimum ?? schema.exclusiveMinimum ?? -1e9,
          max: schema.maximum ?? schema.exclusiveMaximum ?? 1e9,
          minExcluded: schema.minimum === undefined && schema.exclusiveMinimum !== undefined,
          maxExcluded: schema.maximum === undefined && schema.exclusiveMaximum !== undefined,
          noNaN: true,
          noDefaultInfinity: true,
        })
        .filter((n) => allows(schema, n)); // fast-check's -0 lies below an excluded 0, which JSON Schema does not
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const item = schema.items === undefined ? fc.jsonValue({ maxDepth: 2 }) : fromSchema(schema.items);
      const bounds = { minLength: schema.minItems ?? 0, maxLength: schema.maxItems ?? 6 };
      return schema.uniqueItems === true ? fc.uniqueArray(item, { ...bounds, selector: canonical }) : fc.array(item, bounds);
    }
    case 'object': {
      if (schema.properties === undefined) return fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }));
      const required = new Set(schema.required ?? []);
      const shape: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, child] of Object.entries(schema.properties)) shape[key] = fromSchema(child);
      return fc.record(shape, { requiredKeys: [...required] });
    }
    case undefined:
      return fc
        .oneof(fc.jsonValue({ maxDepth: 2 }), fc.string({ minLength: schema.minLength ?? 0 }))
        .filter((v) => allows(schema, v) && v !== null);
    default:
      throw new Error(`no generator for ${JSON.stringify(schema.type)}`);
  }
}

/** Anything JSON can carry, with numbers and strings near the usual edges. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.integer({ min: -10, max: 10 }),
  fc.double({ min: -10, max: 10, noNaN: true }),
  fc.string({ maxLength: 5 }),
  fc.array(fc.oneof(fc.integer({ min: -3, max: 3 }), fc.string({ maxLength: 3 }), fc.constant(null)), { maxLength: 5 }),
);

describe.each(cases)('schema and validation agree: $name', ({ dto, edges }) => {
  @Tool({ name: 'probe', description: 'One property under test', args: dto })
  class Probe {
    run() {
      return 'ran';
    }
  }
  const toolkit = new Toolkit().register(Probe);
  const whole = toolkit.get('probe')?.inputSchema as JsonSchema;
  const schema = whole.properties?.v as JsonSchema;
  const optional = !(whole.required ?? []).includes('v');

  /** What the toolkit does with `{ v: value }`: accepted or refused. */
  const accepts = async (value: unknown): Promise<boolean> => (await toolkit.parseArguments('probe', { v: value }))?.ok === true;
  /**
   * The schema's verdict on `{ v: value }`. class-validator's `@IsOptional()` lets `null`
   * through: the one value validation accepts that the schema of an optional property does
   * not list (docs/tools.md, "One rule for schema and validation").
   */
  const schemaAllows = (value: unknown): boolean => (optional && value === null) || allows(schema, value);

  it('accepts every value generated from the schema', async () => {
    await fc.assert(
      fc.asyncProperty(fromSchema(schema), async (value) => {
        expect({ value, accepted: await accepts(value) }).toEqual({ value, accepted: true });
      }),
      { numRuns: 60 },
    );
  });

  it('accepts only what the schema allows, and everything it allows where the schema can say it', async () => {
    const exact = !hasFormat(schema);
    const check = async (value: unknown): Promise<void> => {
      const verdict = { value, accepted: await accepts(value) };
      const allowed = schemaAllows(value);
      // A typeless schema cannot say "not null" (JSON Schema would need `not`): `@IsNotEmpty()` refuses null, the schema allows it.
      const sayable = exact && !(value === null && schema.type === undefined);
      if (verdict.accepted || sayable) expect(verdict).toEqual({ value, accepted: allowed });
    };
    for (const value of edges ?? []) await check(value);
    await fc.assert(fc.asyncProperty(fc.oneof(anyJson, fromSchema(schema)), check), { numRuns: 150 });
  });
});
