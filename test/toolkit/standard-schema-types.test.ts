/**
 * Our copy of the Standard Schema interfaces (src/decorators/standard-schema.ts) against
 * `@standard-schema/spec` 1.1's own, both ways, at the type level: `npm run typecheck` compiles
 * this file, and a drift in either direction is a compile error here. The assertions are
 * types; the test only makes jest run the file.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 as SpecSchema } from '@standard-schema/spec';
import type { StandardSchemaV1, StandardSchemaWithJson } from '../../src/decorators/standard-schema';
import { standardSchemaOf } from 'toolnexus-ts';

/** `true` only when `A` is assignable to `B`. */
type Assignable<A, B> = [A] extends [B] ? true : false;
type SpecWithJson<I, O> = { readonly '~standard': SpecSchema.Props<I, O> & StandardJSONSchemaV1.Props<I, O> };

class Args {
  city!: string;
}

const checks = {
  ourSchemaIsTheSpecs: true satisfies Assignable<StandardSchemaV1<{ a: string }, Args>, SpecSchema<{ a: string }, Args>>,
  specSchemaIsOurs: true satisfies Assignable<SpecSchema<{ a: string }, Args>, StandardSchemaV1<{ a: string }, Args>>,
  ourWithJsonIsTheSpecs: true satisfies Assignable<StandardSchemaWithJson<unknown, Args>, SpecWithJson<unknown, Args>>,
  ourWithJsonIsSpecJson: true satisfies Assignable<StandardSchemaWithJson<unknown, Args>, StandardJSONSchemaV1<unknown, Args>>,
  specWithJsonIsOurs: true satisfies Assignable<SpecWithJson<unknown, Args>, StandardSchemaWithJson<unknown, Args>>,
  // A schema without jsonSchema is not what `args` takes (the Toolkit refuses it at registration too).
  plainSpecIsNotWithJson: false satisfies Assignable<SpecSchema<unknown, Args>, StandardSchemaWithJson<unknown, Args>>,
  standardSchemaOfIsSpec: true satisfies Assignable<ReturnType<typeof standardSchemaOf<Args>>, SpecWithJson<Record<string, unknown>, Args>>,
};

test('our Standard Schema types and the spec are assignable both ways (checked by the compiler)', () => {
  expect(Object.values(checks).filter((v) => v).length).toBe(6);
});
