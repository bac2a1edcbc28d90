/**
 * `toolnexus-ts decisions export` and `decisions report` (docs/operating.md, "Decisions as
 * evaluation data") as real child processes on a real SQLite file: JSONL on stdout in each
 * format, redacted (field by field with --tools, whole without), usage errors; and the shadow
 * rule's confusion table against a hand count written out below.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pendingOf } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import type { DecisionRow, LangSmithDecisionRow, PolicyReport } from 'toolnexus-ts/decisions';
import { startChild, type Exit } from '../fixtures/children';
import { cardOf, shadowRule, toolkit } from '../fixtures/decisions';

const CLI = join('..', '..', 'src', 'cli', 'main.ts');
const TOOLS = join(__dirname, '..', 'fixtures', 'decisions-tools.ts');
const SINCE = '2000-01-01T00:00:00Z';

let dir: string;
let storeArgs: string[];

/** Eight refunds the shadow rule (≤ 500 approved, > 50 000 denied, else ask) decided, each answered by a person as listed. */
const ANSWERED: Array<[cents: number, answer: 'approve' | 'edit' | 'decline' | 'cancel']> = [
  [100, 'approve'], // rule approved, person approved: agree
  [200, 'edit'], // rule approved, person edited: agree
  [300, 'decline'], // rule approved, person declined: disagree
  [9_000, 'approve'], // rule asked
  [9_000, 'decline'], // rule asked
  [90_000, 'decline'], // rule denied, person declined: agree
  [90_000, 'approve'], // rule denied, person approved: disagree
  [60_000, 'cancel'], // rule denied, person cancelled
];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-decisions-cli-'));
  const filename = join(dir, 'decisions.db');
  const store = new SqliteStore(filename);
  const coordinator = new ResumeCoordinator({ toolkit: toolkit(), store, automaticAnswers: shadowRule });
  try {
    for (const [i, [cents, answer]] of ANSWERED.entries()) {
      const args = { orderId: `ord-${i}`, card: cardOf(i), cents };
      const id = pendingOf(await coordinator.execute('refund', args))!.id;
      const by = { by: { id: 'user:ann' }, comment: `about ${cardOf(i)}` };
      if (answer === 'approve') await coordinator.resolve({ id, ok: true }, undefined, by);
      if (answer === 'edit') await coordinator.resolve({ id, ok: true, args: { ...args, cents: 1 } }, undefined, by);
      if (answer === 'decline') await coordinator.resolve({ id, ok: false }, undefined, by);
      if (answer === 'cancel') await coordinator.cancel(id, 'withdrawn', by);
    }
  } finally {
    await store.close();
  }
  storeArgs = ['--store', `sqlite:${filename}`];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[]): Promise<Exit> => startChild(CLI, args).exited;
const rows = <T>(exit: Exit): T[] =>
  exit.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as T);

it('exports JSONL on stdout, sensitive fields redacted by field with --tools and whole without', async () => {
  const exit = await cli(['decisions', 'export', '--since', SINCE, '--tools', TOOLS, ...storeArgs]);
  expect(exit).toMatchObject({ code: 0, stderr: '' });
  const exported = rows<DecisionRow>(exit);
  expect(exported.map((row) => row.decision.label)).toEqual([
    'approved',
    'edited',
    'declined',
    'approved',
    'declined',
    'declined',
    'approved',
    'cancelled',
  ]);
  expect(exported[0]!.call.args).toEqual({ orderId: 'ord-0', card: '[redacted]', cents: 100 });
  expect(exported[0]!.decision.comment).toBe('about [redacted]');
  expect(ANSWERED.map((_, i) => cardOf(i)).filter((card) => exit.stdout.includes(card))).toEqual([]);

  const blind = await cli(['decisions', 'export', '--since', SINCE, '--format', 'langsmith', '--tool', 'refund', ...storeArgs]);
  expect(blind.code).toBe(0);
  const examples = rows<LangSmithDecisionRow>(blind);
  expect(examples).toHaveLength(ANSWERED.length);
  expect(examples.every((example) => example.inputs.args === '[redacted]')).toBe(true);
  expect(examples[1]!.outputs).toMatchObject({ label: 'edited', editedArgs: '[redacted]' });
  expect(ANSWERED.map((_, i) => cardOf(i)).filter((card) => blind.stdout.includes(card))).toEqual([]);

  const none = await cli(['decisions', 'export', '--since', SINCE, '--tool', 'wire', ...storeArgs]);
  expect(none).toMatchObject({ code: 0, stdout: '' });
});

it('refuses a missing or malformed --since and an unknown --format as usage errors', async () => {
  const refused = async (args: string[], message: RegExp) => {
    const exit = await cli(args);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toMatch(message);
  };
  await refused(['decisions', 'export', ...storeArgs], /^--since is required/);
  await refused(['decisions', 'export', '--since', 'yesterday', ...storeArgs], /since must be an RFC 3339 instant/);
  await refused(
    ['decisions', 'export', '--since', SINCE, '--format', 'csv', ...storeArgs],
    /^--format must be toolnexus, evalite, langsmith or braintrust/,
  );
  await refused(['decisions', 'report', '--since', SINCE, ...storeArgs], /^--policy NAME is required/);
});

it("reports the shadow rule's confusion table, equal to the hand count", async () => {
  const json = await cli(['decisions', 'report', '--policy', 'small-refunds', '--since', SINCE, '--json', ...storeArgs]);
  expect(json.code).toBe(0);
  const zero = { approved: 0, edited: 0, declined: 0, expired: 0, cancelled: 0 };
  expect(JSON.parse(json.stdout) as PolicyReport).toEqual({
    policy: 'small-refunds',
    table: {
      approved: { ...zero, approved: 1, edited: 1, declined: 1 },
      denied: { ...zero, approved: 1, declined: 1, cancelled: 1 },
      ask: { ...zero, approved: 1, declined: 1 },
      'not-applicable': zero,
    },
    total: 8,
    agreed: 3,
    disagreed: 2,
    agreement: 0.6,
  });
  const text = await cli(['decisions', 'report', '--policy', 'small-refunds', '--since', SINCE, ...storeArgs]);
  expect(text.code).toBe(0);
  expect(text.stdout).toContain('policy small-refunds: 8 shadowed request(s); agreed 3, disagreed 2 (60.0% agreement)');
  expect(text.stdout).toMatch(/^approved\s+1\s+1\s+1\s+0\s+0$/m);
  expect(text.stdout).toMatch(/^denied\s+1\s+0\s+1\s+0\s+1$/m);
  const other = await cli(['decisions', 'report', '--policy', 'nobody', '--since', SINCE, '--json', ...storeArgs]);
  expect(JSON.parse(other.stdout) as PolicyReport).toMatchObject({ total: 0, agreed: 0, disagreed: 0 });
});
