/**
 * The test framework's globals (`describe`, `it`, `expect`, hooks), read from `globalThis`
 * when a suite is registered, never at import: this entry imports no test framework, so it
 * loads anywhere and works with jest (and with vitest's `globals: true`). Only what the
 * suite uses is typed here, so its declarations need neither `@types/jest` nor jest.
 */

/** Jest's asymmetric matchers, as used in `toEqual` (`expect.any(Error)`). */
export type AsymmetricMatcher = object;

/** The matchers the conformance suite uses. */
export interface Matchers<R> {
  toBe(expected: unknown): R;
  toEqual(expected: unknown): R;
  toMatchObject(expected: object): R;
  toBeUndefined(): R;
  toBeDefined(): R;
  toBeInstanceOf(expected: unknown): R;
  toBeGreaterThan(expected: number): R;
  toBeGreaterThanOrEqual(expected: number): R;
  toBeLessThan(expected: number): R;
  toBeLessThanOrEqual(expected: number): R;
  toHaveLength(expected: number): R;
  toMatch(expected: string | RegExp): R;
  toContain(expected: unknown): R;
  toThrow(expected?: unknown): R;
}

export interface Expectation extends Matchers<void> {
  not: Matchers<void>;
  rejects: Matchers<Promise<void>>;
  resolves: Matchers<Promise<void>>;
}

export interface Expect {
  (actual: unknown): Expectation;
  any(classType: unknown): AsymmetricMatcher;
  stringMatching(pattern: string | RegExp): AsymmetricMatcher;
}

type Body = () => void | Promise<unknown>;

export interface TestGlobals {
  describe: (name: string, body: () => void) => void;
  it: (name: string, body: Body, timeout?: number) => void;
  beforeEach: (body: Body) => void;
  afterEach: (body: Body) => void;
  expect: Expect;
}

const NAMES = ['describe', 'it', 'beforeEach', 'afterEach', 'expect'] as const;

/** The globals of the running test framework; a clear error outside one. */
export function testGlobals(): TestGlobals {
  const scope = globalThis as unknown as Partial<Record<(typeof NAMES)[number], unknown>>;
  const missing = NAMES.filter((name) => typeof scope[name] !== 'function');
  if (missing.length > 0) {
    throw new Error(
      `toolnexus-ts/testing registers tests: call it from a test file run by jest (or vitest with globals: true); missing globals: ${missing.join(', ')}`,
    );
  }
  return scope as unknown as TestGlobals;
}

/**
 * The globals for a contract checked on one store: `use` gets the store of each test
 * (`current()`, a fresh and empty one per test) before the test runs, so the contract's tests
 * read it from a variable of their own, typed with the optional methods they check.
 */
export function storeGlobals<S>(current: () => S, use: (store: S) => void): TestGlobals {
  const globals = testGlobals();
  globals.beforeEach(() => {
    use(current());
  });
  return globals;
}
