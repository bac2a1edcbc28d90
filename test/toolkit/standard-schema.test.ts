/**
 * A DTO as a Standard Schema V1 with JSON Schema (`standardSchemaOf`, `Toolkit.standardSchemaOf`):
 * `validate` is the Toolkit's own validation (same messages, same rules, synchronous unless a
 * constraint is async), `jsonSchema.input` is the schema the model is shown. The JSON Schemas of
 * each target are compiled by ajv (draft 2020-12 and draft-07) and judge the same values alike.
 */
import 'reflect-metadata';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  Equals,
  IsArray,
  IsInt,
  IsOptional,
  IsPositive,
  IsString,
  Max,
  MinLength,
  Validate,
  ValidateNested,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { defineTool, InvalidArgumentError, schemaForClass, standardSchemaOf, Toolkit } from 'toolnexus-ts';

class LineArgs {
  @IsString() @MinLength(2) sku!: string;
  @IsInt() @IsPositive() @Max(99) quantity!: number;
}

class OrderArgs {
  @IsString() customer!: string;
  @IsArray() @ArrayMaxSize(3) @ValidateNested({ each: true }) @Type(() => LineArgs) lines!: LineArgs[];
  @IsOptional() @Equals('eur') currency?: string;
}

@ValidatorConstraint({ name: 'knownCustomer', async: true })
class KnownCustomer implements ValidatorConstraintInterface {
  async validate(value: unknown): Promise<boolean> {
    await new Promise((resolve) => setImmediate(resolve));
    return value === 'ann';
  }
  defaultMessage(): string {
    return 'customer is not known';
  }
}

class LookupArgs {
  @IsString() @Validate(KnownCustomer) customer!: string;
}

const VALID = { customer: 'ann', lines: [{ sku: 'ab', quantity: 2 }], currency: 'eur' };
const INVALID = { customer: 7, lines: [{ sku: 'a', quantity: 0 }], currency: 'usd', extra: true };

test('validate is synchronous and gives the DTO instance the Toolkit would give run, nested DTOs built, unknown keys stripped', () => {
  const result = standardSchemaOf(OrderArgs)['~standard'].validate({ ...VALID, extra: 1 });
  expect(result).not.toBeInstanceOf(Promise);
  const { value, issues } = result as { value: OrderArgs; issues?: unknown };
  expect(issues).toBeUndefined();
  expect(value).toBeInstanceOf(OrderArgs);
  expect(value.lines[0]).toBeInstanceOf(LineArgs);
  expect(value).toEqual({ customer: 'ann', lines: [{ sku: 'ab', quantity: 2 }], currency: 'eur' });
});

test('issues are the Toolkit error result, one by one with their paths (array indices as numbers)', async () => {
  const result = standardSchemaOf(OrderArgs)['~standard'].validate(INVALID) as { issues: Array<{ message: string; path?: unknown[] }> };
  expect(result.issues).toEqual([
    { path: ['customer'], message: 'customer must be a string' },
    { path: ['lines', 0, 'sku'], message: 'sku must be longer than or equal to 2 characters' },
    { path: ['lines', 0, 'quantity'], message: 'quantity must be a positive number' },
    { path: ['currency'], message: 'currency must be equal to eur' },
  ]);
  const toolkit = new Toolkit().register(defineTool({ name: 'order', description: 'Place an order', args: OrderArgs, run: () => 'ok' }));
  const output = (await toolkit.execute('order', INVALID)).output;
  expect(output).toBe(`invalid arguments for order: ${result.issues.map((i) => `${(i.path ?? []).join('.')}: ${i.message}`).join('; ')}`);
});

test('arguments that are no object, or JSON text that is not, are one issue without a path, as the Toolkit says it', () => {
  const validate = standardSchemaOf(OrderArgs)['~standard'].validate;
  expect(validate([1, 2])).toEqual({ issues: [{ message: 'arguments must be a JSON object, got an array' }] });
  expect(validate('{"customer":')).toEqual({ issues: [{ message: expect.stringMatching(/^arguments are not valid JSON/) as unknown }] });
});

test('a DTO with an async constraint validates through a promise, the constraint applied', async () => {
  const validate = standardSchemaOf(LookupArgs)['~standard'].validate;
  const refused = validate({ customer: 'bob' });
  expect(refused).toBeInstanceOf(Promise);
  expect(await refused).toEqual({ issues: [{ path: ['customer'], message: 'customer is not known' }] });
  expect(await validate({ customer: 'ann' })).toEqual({ value: expect.any(LookupArgs) as unknown });
});

test('jsonSchema.input is the schema the model sees, for draft 2020-12 and draft-07, a fresh copy each time', () => {
  const json = standardSchemaOf(OrderArgs)['~standard'].jsonSchema;
  const shown = new Toolkit()
    .register(defineTool({ name: 'order', description: 'd', args: OrderArgs, run: () => 'ok' }))
    .get('order')?.inputSchema;
  expect(json.input({ target: 'draft-2020-12' })).toEqual(shown);
  expect(json.input({ target: 'draft-07' })).toEqual(schemaForClass(OrderArgs));
  expect(json.output({ target: 'draft-07' })).toEqual(schemaForClass(OrderArgs));
  const copy = json.input({ target: 'draft-2020-12' });
  copy.type = 'string';
  expect(json.input({ target: 'draft-2020-12' }).type).toBe('object');
});

test.each([
  ['draft-2020-12', new Ajv2020({ strict: false })],
  ['draft-07', new Ajv({ strict: false })],
])('the %s schema, compiled by ajv, accepts and refuses what validate does', (target, ajv) => {
  const schema = standardSchemaOf(OrderArgs);
  const check = ajv.compile(schema['~standard'].jsonSchema.input({ target }));
  for (const value of [VALID, INVALID, { customer: 'a', lines: [] }, { customer: 'a', lines: [{ sku: 'ab', quantity: 100 }] }]) {
    const ours = schema['~standard'].validate(value) as { issues?: unknown };
    expect([target, value, check(value)]).toEqual([target, value, ours.issues === undefined]);
  }
});

test('openapi-3.0 spells const and exclusive bounds its way; another target throws', () => {
  const json = standardSchemaOf(OrderArgs)['~standard'].jsonSchema;
  const schema = json.input({ target: 'openapi-3.0' }) as { properties: Record<string, Record<string, unknown>> };
  expect(schema.properties.currency).toEqual({ enum: ['eur'] });
  expect((schema.properties.lines?.items as { properties: Record<string, unknown> }).properties.quantity).toEqual({
    type: 'integer',
    minimum: 0,
    exclusiveMinimum: true,
    maximum: 99,
  });
  expect(() => json.input({ target: 'draft-04' })).toThrow(InvalidArgumentError);
  expect(() => json.output({ target: 'draft-2019-09' })).toThrow(/"draft-2019-09"/);
});

test("Toolkit.standardSchemaOf gives a registered tool's arguments under the Toolkit's bounds", () => {
  const toolkit = new Toolkit({ maxArgumentBytes: 200 }).register(
    defineTool({ name: 'order', description: 'Place an order', args: OrderArgs, run: () => 'ok' }),
  );
  const schema = toolkit.standardSchemaOf('order');
  expect(schema?.['~standard'].vendor).toBe('toolnexus');
  expect(schema?.['~standard'].validate(VALID)).toEqual({ value: expect.any(OrderArgs) as unknown });
  const tooLarge = schema?.['~standard'].validate({ ...VALID, customer: 'x'.repeat(300) }) as { issues: Array<{ message: string }> };
  expect(tooLarge.issues[0]?.message).toBe('arguments are larger than 200 bytes');
  expect(toolkit.standardSchemaOf('nope')).toBeUndefined();
});
