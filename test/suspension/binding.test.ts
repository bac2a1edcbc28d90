import fc from 'fast-check';
// Internal module: the digest's canonical form is not part of the package's API.
import { canonicalJson, sameJson } from '../../src/suspension/binding';

/** JSON.stringify with every object rebuilt with sorted keys (which puts integer-like keys first). */
function reference(value: unknown): string {
  if (value === undefined) return 'undefined';
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

/** The same value with every object's keys inserted in reverse order. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .reverse()
      .map(([key, item]) => [key, reversedKeys(item)]),
  );
}

describe('the canonical JSON a binding digests', () => {
  it('reads back as the same value, and does not depend on key order (seeded)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(canonicalJson(reversedKeys(value))).toBe(text);
      }),
      { seed: 20261202, numRuns: 2_000 },
    );
  });

  it('honours toJSON and drops what JSON drops, as the stores will', () => {
    const value = { z: new Date(0), y: undefined, f: () => 1, x: { toJSON: () => ({ q: 1, p: 2 }) }, list: [undefined, () => 1, 3] };
    expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(reference(value)));
    expect(canonicalJson(value)).toBe('{"list":[null,null,3],"x":{"p":2,"q":1},"z":"1970-01-01T00:00:00.000Z"}');
    expect(sameJson({ a: 1, b: [1, { d: 2, c: 3 }] }, { b: [1, { c: 3, d: 2 }], a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 2 })).toBe(false);
  });
});
