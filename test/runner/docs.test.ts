import { docPrograms, runProgram, typeErrors } from '../fixtures/doc-programs';

/** docs/agents.md: every complete program type-checks and prints what its `// →` comments say, in order. */
const programs = docPrograms('agents.md');

describe('docs/agents.md', () => {
  it('has runnable programs for the loop, streaming, waitFor, the durable halt, typed answers and usage', () => {
    expect(programs).toHaveLength(6);
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
