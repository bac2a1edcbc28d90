import { docPrograms, runProgram, typeErrors } from '../fixtures/doc-programs';

/** docs/mcp.md: its complete program type-checks and prints what its `// →` comments say, in order. */
const programs = docPrograms('mcp.md');

describe('docs/mcp.md', () => {
  it('has the serve-and-use program', () => {
    expect(programs.map((p) => p.section)).toEqual(['']);
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
