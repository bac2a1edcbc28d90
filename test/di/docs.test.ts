import { docPrograms, runProgram, typeErrors } from '../fixtures/doc-programs';

/** docs/dependency-injection.md: every complete program type-checks and prints what the page says. */
const programs = docPrograms('dependency-injection.md');

describe('docs/dependency-injection.md', () => {
  it('its programs type-check under strict settings', () => {
    expect(typeErrors(programs)).toEqual([]);
  });

  it('has a runnable program for the plain resolver, tsyringe, InversifyJS and NestJS', () => {
    expect(programs.map((p) => p.section)).toEqual(expect.arrayContaining(['The plain resolver', 'tsyringe', 'InversifyJS', 'NestJS']));
  });

  it.each(programs.map((p) => [p.section, p.code] as const))('%s: the program prints what the page says', async (_section, code) => {
    const { expected, printed } = await runProgram(code);
    expect(expected.length).toBeGreaterThan(0);
    expect(printed).toEqual(expected);
  });
});
