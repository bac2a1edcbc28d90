/**
 * evalite runs an eval over the exported rows (docs/operating.md, "Decisions as evaluation
 * data"), the whole of it and nothing stood in for: evalite@0.19.0 and vitest@4.1.12 (which
 * evalite runs inside, and needs beside it) are devDependencies. The test exports settled
 * requests with `format: 'evalite'`, writes the JSONL and an `*.eval.ts` file reading it as the
 * eval's `data` into a temporary folder, and starts test/fixtures/decisions/run-evalite.mjs in a
 * real Node process: evalite's own `runEvalite` (vitest, its reporter, in-memory storage) runs
 * the eval and writes its results JSON, which the test reads back.
 *
 * A child process, not jest: evalite and vitest ship ES modules only, so the same test runs on
 * Node 20, 22 and 24. The temporary folder resolves `evalite` through a link to this project's
 * copy (its own node_modules/evalite), so vite's cache stays in that folder too.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MemoryStore } from 'toolnexus-ts/memory';
import { exportDecisions, type EvaliteDecisionRow } from 'toolnexus-ts/decisions';
import { seedDecisions, toolkit } from '../fixtures/decisions';

const SINCE = '2000-01-01T00:00:00Z';
const COUNT = 24;
const RUNNER = join(__dirname, '..', 'fixtures', 'decisions', 'run-evalite.mjs');
const EVALITE = join(__dirname, '..', '..', 'node_modules', 'evalite');
/** vitest starting on a loaded 2-core machine is slow; the run itself takes seconds. */
const RUN_TIMEOUT_MS = 120_000;

/** evalite 0.19.0's results JSON (`outputPath`, dist/run-evalite.js `exportResultsToJSON`), the parts read here. */
interface EvaliteResults {
  run: { runType: string };
  evals: Array<{
    name: string;
    filepath: string;
    status: string;
    averageScore: number;
    results: Array<{
      input: unknown;
      output: unknown;
      expected: unknown;
      status: string;
      colOrder: number;
      scores: Array<{ name: string; score: number }>;
    }>;
  }>;
}

/** An eval as docs/operating.md tells one to write it: the rows read back from the JSONL file. */
function evalSource(jsonl: string): string {
  return `import { readFileSync } from 'node:fs';
import { createScorer, evalite } from 'evalite';

type Input = { tool: string };
type Expected = { label?: string };

evalite<Input, string, Expected>('decisions', {
  data: async () =>
    readFileSync(${JSON.stringify(jsonl)}, 'utf8')
      .trim()
      .split('\\n')
      .map((line) => JSON.parse(line)),
  task: (input) => input.tool,
  scorers: [
    createScorer<Input, string, Expected>({
      name: 'labelled',
      scorer: ({ input, output, expected }) => (output === input.tool && expected?.label !== undefined ? 1 : 0),
    }),
  ],
});
`;
}

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolnexus-evalite-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it(
  "evalite's own run reads the exported JSONL as an eval's data: one result per row, input and expected as exported, all scored",
  async () => {
    const store = new MemoryStore();
    await seedDecisions(store, COUNT);
    const rows: EvaliteDecisionRow[] = [];
    for await (const row of exportDecisions(store, { since: SINCE, toolkit: toolkit(), format: 'evalite' })) rows.push(row);
    expect(rows).toHaveLength(COUNT);
    expect(rows.some((row) => row.expected.label === 'edited' && row.expected.editedArgs !== undefined)).toBe(true);

    const jsonl = join(dir, 'decisions.jsonl');
    await writeFile(jsonl, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
    const evals = join(dir, 'evals');
    await mkdir(join(evals, 'node_modules'), { recursive: true });
    await symlink(EVALITE, join(evals, 'node_modules', 'evalite'), 'dir');
    await writeFile(join(evals, 'decisions.eval.ts'), evalSource(jsonl));
    const output = join(dir, 'results.json');

    const run = await promisify(execFile)(process.execPath, [RUNNER, evals, output], {
      cwd: evals,
      timeout: RUN_TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(`evalite's run failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
    });
    expect(run.stdout).toContain('Results exported to:');

    const results = JSON.parse(await readFile(output, 'utf8')) as EvaliteResults;
    expect(results.run.runType).toBe('full');
    expect(results.evals.map(({ name, filepath, status }) => ({ name, filepath, status }))).toEqual([
      { name: 'decisions', filepath: join(evals, 'decisions.eval.ts'), status: 'success' },
    ]);
    const [evaluation] = results.evals;
    const byOrder = [...evaluation!.results].sort((a, b) => a.colOrder - b.colOrder);
    expect(byOrder.length).toBe(COUNT);
    expect(byOrder.map(({ input, expected }) => ({ input, expected }))).toEqual(rows);
    expect(byOrder.map((result) => result.status)).toEqual(rows.map(() => 'success'));
    expect(byOrder.map((result) => result.output)).toEqual(rows.map((row) => row.input.tool));
    expect(byOrder.map((result) => result.scores.map(({ name, score }) => ({ name, score })))).toEqual(
      rows.map(() => [{ name: 'labelled', score: 1 }]),
    );
    expect(evaluation!.averageScore).toBe(1);
  },
  RUN_TIMEOUT_MS + 30_000,
);
