import 'reflect-metadata';
import fc from 'fast-check';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Min, ValidateNested } from 'class-validator';
import { Tool, Toolkit } from 'toolnexus-ts';

class Note {
  @IsString() text!: string;
}

class TransferArgs {
  @IsString() from!: string;
  @IsString() to!: string;
  @IsInt() @Min(1) amount!: number;
  @IsOptional() @ValidateNested() @Type(() => Note) note?: Note;
}

const violations: string[] = [];
let runs = 0;

@Tool({ description: 'Move money', args: TransferArgs })
class TransferTool {
  run(args: TransferArgs) {
    runs++;
    const valid =
      args instanceof TransferArgs &&
      typeof args.from === 'string' &&
      typeof args.to === 'string' &&
      Number.isInteger(args.amount) &&
      args.amount >= 1 &&
      // @IsOptional() lets null and undefined through (class-validator's rule); anything else must be a Note.
      (args.note == null || (args.note instanceof Note && typeof args.note.text === 'string'));
    if (!valid) violations.push(JSON.stringify(args));
    return 'ok';
  }
}

const dangerousKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'from', 'amount', 'note');
const key = fc.oneof(fc.string({ maxLength: 12 }), dangerousKey);
const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 30 }),
  fc.tuple(fc.string({ minLength: 1, maxLength: 4 }), fc.integer({ min: 2_500, max: 50_000 })).map(([unit, n]) => unit.repeat(n)),
  fc.constantFrom('5', '', 'NaN', 'Infinity', '1e309', '-0'),
);
const { value: nested } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
}));
/** Arguments with the right keys and wrong (or right) values. */
const nearMiss = fc.record(
  {
    from: fc.oneof(fc.string(), scalar, nested),
    to: fc.oneof(fc.string(), scalar),
    amount: fc.oneof(fc.integer(), scalar, nested),
    note: fc.oneof(nested, fc.record({ text: scalar })),
  },
  { requiredKeys: [] },
);
/** JSON text with own `__proto__` / `constructor` keys, as a model could send it. */
const hostileJson = fc
  .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.jsonValue())
  .map(([k, v]) => `{"from":"a","to":"b","amount":1,"${k}":{"polluted":${JSON.stringify(v ?? null)},"prototype":{"polluted":true}}}`);
const deep = fc.integer({ min: 50, max: 3000 }).map((depth) => {
  let v: unknown = { from: 'a' };
  for (let i = 0; i < depth; i++) v = { note: v, amount: [v] };
  return v;
});
const garbageText = fc.oneof(fc.string({ maxLength: 200 }), fc.json(), fc.string({ unit: 'binary', maxLength: 100 }), hostileJson);

const payload = fc.oneof(scalar, nested, nearMiss, garbageText, hostileJson, deep, fc.array(nearMiss, { maxLength: 3 }));

describe('fuzz: 10,000 malformed argument payloads', () => {
  it('never rejects, never runs with invalid args, and keeps Object.prototype clean', async () => {
    const toolkit = new Toolkit().register(TransferTool);
    const prototypeKeysBefore = Object.getOwnPropertyNames(Object.prototype).sort();
    let results = 0;
    await fc.assert(
      fc.asyncProperty(payload, async (args) => {
        const r = await toolkit.execute('transfer', args);
        results++;
        expect(typeof r.output).toBe('string');
        expect(typeof r.isError).toBe('boolean');
        if (r.isError) expect(r.output.startsWith('invalid arguments for transfer: ')).toBe(true);
      }),
      { numRuns: 10_000, seed: 20261202 },
    );
    expect(results).toBe(10_000);
    expect(violations).toEqual([]);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeysBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The generators do produce valid calls too, so the run-side check is exercised.
    expect(runs).toBeGreaterThan(0);
  });
});
