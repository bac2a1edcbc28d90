import { docPrograms, runProgram, typeErrors } from '../fixtures/doc-programs';

/** docs/observability.md: its complete program type-checks and prints what its `// →` comments say, in order. */
const programs = docPrograms('observability.md');

describe('docs/observability.md', () => {
  it('has the halted-and-resumed program', () => {
    expect(programs.map((p) => p.section)).toEqual(['Set-up']);
  });

  it('its program type-checks under strict settings', () => {
    expect(typeErrors(programs)).toEqual([]);
  });

  it.each(programs.map((p, i) => [i, p.code] as const))('program %i prints what the page says', async (_i, code) => {
    const { expected, printed } = await runProgram(code);
    expect(expected.length).toBeGreaterThan(0);
    expect(printed).toEqual(expected);
  });
});
