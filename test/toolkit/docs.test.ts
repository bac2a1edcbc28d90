import { docPrograms, runProgram, typeErrors } from '../fixtures/doc-programs';

/** docs/tools.md: every complete program type-checks and prints what its `// →` comments say, in order. */
const programs = docPrograms('tools.md');

describe('docs/tools.md', () => {
  it('has runnable programs for the first tool and for shared base classes', () => {
    expect(programs.map((p) => p.section)).toEqual(['', 'Shared base classes']);
  });

  it('its programs type-check under strict settings', () => {
    expect(typeErrors(programs)).toEqual([]);
  });

  it.each(programs.map((p, i) => [i, p.code] as const))('program %i prints what the page says', async (_i, code) => {
    const { expected, printed } = await runProgram(code);
    expect(expected.length).toBeGreaterThan(0);
    expect(printed).toEqual(expected);
  });
});
