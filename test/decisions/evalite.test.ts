/**
 * evalite reads the exported rows as a dataset and runs an eval over them (docs/operating.md,
 * "Decisions as evaluation data"). evalite@0.19.0 is a devDependency and its own code does the
 * work: `evalite(name, { data, task, scorers })` reads the JSONL file through `data`, makes one
 * case per row, runs the task and the scorer, and reports each result as its annotation; its
 * reporter (`evalite/reporter`) stores them in its in-memory storage (`evalite/in-memory-storage`,
 * so no better-sqlite3), which the test reads back.
 *
 * What stands in: vitest. evalite runs inside vitest (`import { describe, inject, it } from
 * "vitest"` in dist/evalite.js, `createVitest` in `evalite/runner`) but does not declare it as a
 * dependency, and it is not one of this project's, so `import('evalite')` alone fails with
 * ERR_MODULE_NOT_FOUND "Cannot find package 'vitest'". The three functions evalite takes from it
 * are recorded here and called as vitest calls them: the suite's body once, then each case with
 * its context (`task.file.filepath`, `annotate`), the annotations handed to evalite's reporter.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore } from 'toolnexus-ts/memory';
import { exportDecisions, type EvaliteDecisionRow } from 'toolnexus-ts/decisions';
import { seedDecisions, toolkit } from '../fixtures/decisions';

const SINCE = '2000-01-01T00:00:00Z';
const COUNT = 24;

type CaseContext = { task: { file: { filepath: string } }; annotate: (message: string) => Promise<unknown> };
type Case = { name: string; run: (context: CaseContext) => Promise<void> };

/** vitest's `describe`, `it` and `inject` as evalite 0.19.0 uses them, recording what it registers. */
const registered = { suites: [] as Array<{ name: string; body: () => Promise<void> }>, cases: [] as Case[] };
const provided = new Map<string, unknown>();
// Jest's module mock for ES modules; @types/jest does not declare it yet.
const esm = jest as unknown as {
  unstable_mockModule(name: string, factory: () => unknown, options: { virtual: boolean }): void;
};
esm.unstable_mockModule(
  'vitest',
  () => {
    const describe = (name: string, body: () => Promise<void>) => void registered.suites.push({ name, body });
    const it = (name: string, run: Case['run']) => void registered.cases.push({ name, run });
    return {
      describe: Object.assign(describe, { skip: () => undefined }),
      it: Object.assign(it, { concurrent: it }),
      inject: (key: string) => provided.get(key),
    };
  },
  { virtual: true },
);

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolnexus-evalite-'));
});
afterEach(async () => {
  registered.suites.length = 0;
  registered.cases.length = 0;
  await rm(dir, { recursive: true, force: true });
});

it("evalite reads the exported JSONL as an eval's data and reports one result per row, input and expected as exported", async () => {
  const store = new MemoryStore();
  await seedDecisions(store, COUNT);
  const rows: EvaliteDecisionRow[] = [];
  for await (const row of exportDecisions(store, { since: SINCE, toolkit: toolkit(), format: 'evalite' })) rows.push(row);
  expect(rows).toHaveLength(COUNT);
  const file = join(dir, 'decisions.jsonl');
  await writeFile(file, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');

  const { evalite, createScorer } = await import('evalite');
  const { createInMemoryStorage } = await import('evalite/in-memory-storage');
  const { default: EvaliteReporter } = await import('evalite/reporter');

  // An eval as docs/operating.md tells one to write it: the rows read back from the JSONL file.
  const filepath = join(dir, 'decisions.eval.ts');
  evalite<EvaliteDecisionRow['input'], string, EvaliteDecisionRow['expected']>('decisions', {
    data: async () =>
      (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as EvaliteDecisionRow),
    task: (input) => input.tool,
    scorers: [
      createScorer<EvaliteDecisionRow['input'], string, EvaliteDecisionRow['expected']>({
        name: 'labelled',
        scorer: ({ input, output, expected }) => (output === input.tool && expected?.label !== undefined ? 1 : 0),
      }),
    ],
  });

  const storage = createInMemoryStorage();
  const exitCodes: number[] = [];
  const reporter = new EvaliteReporter({
    storage,
    logNewState: () => undefined,
    port: 0,
    isWatching: false,
    scoreThreshold: undefined,
    modifyExitCode: (code) => void exitCodes.push(code),
    mode: 'run-once-and-exit',
    hideTable: true,
  });
  // What vitest hands the reporter at the start of a run: a logger and the files it will run
  // (untyped here: vitest's types are absent with vitest itself).
  reporter.onInit({ logger: { log: () => undefined }, state: { getFiles: () => [{ filepath }] } });

  provided.set('cwd', dir);
  expect(registered.suites.map((suite) => suite.name)).toEqual(['decisions']);
  for (const suite of registered.suites) await suite.body();
  expect(registered.cases).toHaveLength(COUNT);
  const annotations: string[] = [];
  await Promise.all(
    registered.cases.map((test) =>
      test.run({
        task: { file: { filepath } },
        annotate: async (message) => {
          annotations.push(message);
          reporter.onTestCaseAnnotate({}, { message, type: 'notice' });
        },
      }),
    ),
  );
  // The reporter stores results one event at a time; wait for its queue to drain.
  await (reporter as unknown as { runner: { waitForCompletion(): Promise<void> } }).runner.waitForCompletion();

  const submitted = annotations.map((message) => JSON.parse(message) as { type: string }).filter((a) => a.type === 'RESULT_SUBMITTED');
  expect(submitted).toHaveLength(COUNT);
  const runs = await storage.runs.getMany({});
  expect(runs).toHaveLength(1);
  const evals = await storage.evals.getMany({ runIds: runs.map((run) => run.id) });
  expect(evals.map((evaluation) => evaluation.name)).toEqual(['decisions']);
  const results = (await storage.results.getMany({ evalIds: evals.map((evaluation) => evaluation.id) })).sort(
    (a, b) => a.col_order - b.col_order,
  );
  expect(results).toHaveLength(COUNT);
  expect(results.map((result) => ({ input: result.input, expected: result.expected }))).toEqual(rows);
  expect(results.map((result) => result.status)).toEqual(rows.map(() => 'success'));
  expect(results.map((result) => result.output)).toEqual(rows.map((row) => row.input.tool));
  const scores = await storage.scores.getMany({ resultIds: results.map((result) => result.id) });
  expect(scores).toHaveLength(COUNT);
  expect(scores.every((score) => score.name === 'labelled' && score.score === 1)).toBe(true);
  expect(rows.some((row) => row.expected.label === 'edited' && row.expected.editedArgs !== undefined)).toBe(true);
  expect(exitCodes).toEqual([]);
});
