/**
 * Any Standard Schema with JSON Schema as a tool's `args` (`@Tool({ args })`, `defineTool`):
 * zod 4, valibot (through `toStandardJsonSchema` of @valibot/to-json-schema) and arktype 2.2,
 * the real libraries. The one rule: the schema shown to the model is the one the library gave
 * for draft 2020-12, and ajv compiling it accepts exactly what the Toolkit's call accepts.
 * Failures are the Toolkit's usual `invalid arguments for NAME: path: message` result.
 */
import 'reflect-metadata';
import Ajv2020 from 'ajv/dist/2020';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import type { Type } from 'arktype';
import * as v from 'valibot';
import { z } from 'zod';
import { defineTool, StandardSchemaError, Tool, Toolkit, type FunctionTool, type ToolnexusError } from 'toolnexus-ts';

/** arktype is ES modules only: loaded by a real dynamic import (jest runs with --experimental-vm-modules). */
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- ts-jest turns import() into require(), which cannot load ES modules here
const importEsm = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<typeof import('arktype')>;
let arkArgs: Type<{ city: string; days?: number }>;
beforeAll(async () => {
  const { type } = await importEsm('arktype');
  arkArgs = type({ city: 'string >= 2', 'days?': '1 <= number.integer <= 7' });
});

const zodArgs = z.object({ city: z.string().min(2), days: z.number().int().min(1).max(7).default(3) });
const valibotArgs = toStandardJsonSchema(
  v.object({
    city: v.pipe(v.string(), v.minLength(2)),
    days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(7)), 3),
  }),
);

const LIBRARIES = [
  {
    library: 'zod',
    args: () => zodArgs,
    bad: 'city: Too small: expected string to have >=2 characters; days: Too big: expected number to be <=7',
  },
  {
    library: 'valibot',
    args: () => valibotArgs,
    bad: 'city: Invalid length: Expected >=2 but received 1; days: Invalid value: Expected <=7 but received 9',
  },
  { library: 'arktype', args: () => arkArgs, bad: 'city: city must be at least length 2 (was 1); days: days must be at most 7 (was 9)' },
] as const;

const SAMPLES: unknown[] = [
  { city: 'Oslo' },
  { city: 'Oslo', days: 2 },
  { city: 'O' },
  { city: 'Oslo', days: 9 },
  { city: 'Oslo', days: 1.5 },
  { days: 2 },
  { city: 7 },
];

describe.each(LIBRARIES)('$library', ({ args: argsOf, bad }) => {
  const seen: unknown[] = [];
  let viaDefine: FunctionTool;
  let toolkit: Toolkit;
  let library: Record<string, unknown>;

  beforeAll(() => {
    const args = argsOf();
    viaDefine = defineTool({ name: 'forecast', description: 'The weather ahead', args, run: (value) => (seen.push(value), 'sunny') });

    @Tool({ name: 'forecast_class', description: 'The weather ahead', args })
    class ForecastTool {
      run(value: unknown): string {
        seen.push(value);
        return 'cloudy';
      }
    }

    toolkit = new Toolkit().register(viaDefine, ForecastTool);
    const { $schema, ...rest } = args['~standard'].jsonSchema.input({ target: 'draft-2020-12' });
    expect($schema).toBe('https://json-schema.org/draft/2020-12/schema');
    library = rest;
  });

  test.each(['forecast', 'forecast_class'])(
    '%s: the schema shown is the one the library gives for draft 2020-12, less its $schema',
    (name) => {
      expect(toolkit.get(name)?.inputSchema).toEqual(library);
      expect(toolkit.toOpenAI().find((t) => t.function.name === name)?.function.parameters).toEqual(library);
    },
  );

  test('a valid call runs with what validation gave; an invalid one is the usual argument error, each issue with its path', async () => {
    seen.length = 0;
    expect(await toolkit.execute('forecast', '{"city":"Oslo","days":2}')).toEqual({ output: 'sunny', isError: false });
    expect(await toolkit.execute('forecast_class', { city: 'Bergen', days: 1 })).toEqual({ output: 'cloudy', isError: false });
    expect(seen).toEqual([
      { city: 'Oslo', days: 2 },
      { city: 'Bergen', days: 1 },
    ]);
    const refused = await toolkit.execute('forecast', { city: 'O', days: 9 });
    expect(refused).toEqual({ output: `invalid arguments for forecast: ${bad}`, isError: true });
    expect(seen).toHaveLength(2);
  });

  test('ajv compiling the shown schema accepts exactly the calls the Toolkit accepts', async () => {
    const check = new Ajv2020({ strict: false }).compile(toolkit.get('forecast')?.inputSchema ?? {});
    for (const sample of SAMPLES) {
      const call = await toolkit.prepare('forecast', sample);
      expect([sample, call.ok]).toEqual([sample, check(sample)]);
    }
  });

  test("the Toolkit's bounds apply before the library walks the arguments", async () => {
    const small = new Toolkit({ maxArgumentBytes: 40 }).register(viaDefine);
    expect((await small.execute('forecast', { city: 'x'.repeat(100) })).output).toBe(
      'invalid arguments for forecast: arguments are larger than 40 bytes',
    );
  });
});

test('zod: a default and an async refinement take effect, as the library validates', async () => {
  const args = z.object({ user: z.string().refine(async (name) => (await Promise.resolve(name)) !== 'mallory', 'user is blocked') });
  const seen: unknown[] = [];
  const toolkit = new Toolkit().register(
    defineTool({ name: 'greet', description: 'Greets', args, run: (value) => (seen.push(value), `hi ${value.user}`) }),
    defineTool({ name: 'forecast', description: 'd', args: zodArgs, run: (value) => `${value.city} ${value.days}` }),
  );
  expect((await toolkit.execute('greet', { user: 'mallory' })).output).toBe('invalid arguments for greet: user: user is blocked');
  expect((await toolkit.execute('greet', { user: 'ann' })).output).toBe('hi ann');
  expect((await toolkit.execute('forecast', { city: 'Oslo' })).output).toBe('Oslo 3');
  // The tool's arguments as a Standard Schema again: the library's validation under the Toolkit's bounds.
  const again = toolkit.standardSchemaOf('greet')?.['~standard'];
  expect(await again?.validate({ user: 'mallory' })).toEqual({ issues: [{ path: ['user'], message: 'user is blocked' }] });
  expect(await again?.validate({ user: 'ann', extra: 1 })).toEqual({ value: { user: 'ann' } });
});

test('a Standard Schema without ~standard.jsonSchema is refused at registration with a stable code', () => {
  const plain = v.object({ city: v.string() }); // valibot's own schema: a Standard Schema, no JSON Schema
  const register = () => new Toolkit().register(defineTool({ name: 'forecast', description: 'd', args: plain as never, run: () => 'ok' }));
  expect(register).toThrow(StandardSchemaError);
  expect(register).toThrow(/^tool "forecast": args is a Standard Schema \(vendor valibot\) without ~standard\.jsonSchema/);
  try {
    register();
  } catch (error) {
    expect((error as ToolnexusError).code).toBe('TOOLNEXUS_STANDARD_SCHEMA');
  }
});

test('a schema that is not of an object, or whose conversion throws, is refused at registration', () => {
  expect(() => new Toolkit().register(defineTool({ name: 'n', description: 'd', args: z.string(), run: () => 'ok' }))).toThrow(
    /must describe an object \(JSON Schema type "object"\)/,
  );
  const custom = z.object({ when: z.custom<Date>((value) => value instanceof Date) });
  expect(() => new Toolkit().register(defineTool({ name: 'n', description: 'd', args: custom, run: () => 'ok' }))).toThrow(
    StandardSchemaError,
  );
});

test('sensitive names the top-level arguments a shown call redacts (a Standard Schema has no @Sensitive)', async () => {
  const args = z.object({ user: z.string(), password: z.string() });
  const toolkit = new Toolkit().register(
    defineTool({ name: 'login', description: 'Log in', args, sensitive: ['password'], run: () => 'ok' }),
    defineTool({ name: 'plain', description: 'Log in', args, run: () => 'ok' }),
  );
  expect(toolkit.redact('login', { user: 'ann', password: 'hunter2' })).toEqual({ user: 'ann', password: '[redacted]' });
  expect(toolkit.redact('plain', { user: 'ann', password: 'hunter2' })).toEqual({ user: 'ann', password: 'hunter2' });
  expect(() =>
    new Toolkit().register(defineTool({ name: 'x', description: 'd', args, sensitive: 'password' as never, run: () => 'ok' })),
  ).toThrow(/sensitive must be an array of argument names/);
  expect((await toolkit.execute('login', { user: 'ann' })).output).toBe(
    'invalid arguments for login: password: Invalid input: expected string, received undefined',
  );
});
