/**
 * Decisions as evaluation data (docs/operating.md): `exportDecisions` over a SQLite file and a
 * PostgreSQL schema holding 1,000 settled requests of every kind, made by real coordinators.
 * Every row validates against the published JSON Schema (ajv, draft 2020-12); no card number
 * (`@Sensitive`, quoted in prompts, transcripts, comments and outcomes) appears in any format;
 * the store is read in bounded pages, lazily, and never listed whole; the policy report's
 * counts equal the hand count kept while the requests were answered.
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { PostgresStore } from 'toolnexus-ts/postgres';
import type { RunStore } from 'toolnexus-ts/agents';
import type { SettledPageQuery, SuspensionStore } from 'toolnexus-ts/suspension';
import { exportDecisions, policyReport, type DecisionFormat, type DecisionRow } from 'toolnexus-ts/decisions';
import { seedDecisions, toolkit, type Tally } from '../fixtures/decisions';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';

const COUNT = 1_000;
const SCHEMA_FILE = join(__dirname, '..', '..', 'src', 'decisions', 'decision.schema.json');
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const SINCE = '2000-01-01T00:00:00.000Z';

type Store = SuspensionStore & RunStore;

/** The store, with every read that could load the table counted: pages (and their sizes), lists and histories. */
function counted(store: Store): { store: Store; pages: SettledPageQuery[]; whole: string[] } {
  const pages: SettledPageQuery[] = [];
  const whole: string[] = [];
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (key === 'settledPage') pages.push(args[0] as SettledPageQuery);
        if (key === 'list' || key === 'history') whole.push(key);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, pages, whole };
}

async function all<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
ajv.addFormat('date-time', RFC3339);
const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as object);
const valid = (row: unknown): boolean => validate(row);

describe.each([
  ['SQLite file', 'sqlite'],
  ['PostgreSQL', 'postgres'],
] as const)('exportDecisions over %s', (_name, backend) => {
  let store: Store;
  let tally: Tally;
  let dir: string | undefined;
  const schema = uniqueSchema('decisions');
  let url: string;

  beforeAll(async () => {
    if (backend === 'sqlite') {
      dir = mkdtempSync(join(tmpdir(), 'toolnexus-decisions-'));
      store = new SqliteStore({ filename: join(dir, 'decisions.db'), synchronous: 'normal' });
    } else {
      url = await postgresUrl();
      store = new PostgresStore({ connectionString: url, schema });
    }
    tally = await seedDecisions(store, COUNT);
  }, 300_000);

  afterAll(async () => {
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (backend === 'postgres') await dropSchema(url, schema);
  });

  it('yields one row per settled request, each valid against the published JSON Schema, with the hand-counted labels', async () => {
    const rows = await all(exportDecisions(store, { since: SINCE, toolkit: toolkit() }));
    expect(rows).toHaveLength(COUNT);
    const invalid: Array<{ id: string; errors: unknown }> = [];
    for (const row of rows) if (!valid(row)) invalid.push({ id: row.id, errors: validate.errors });
    expect(invalid).toEqual([]);
    // The validator is no rubber stamp: a row with a field the schema does not publish, or a wrong label, fails.
    expect(valid({ ...rows[0], leaked: 'x' })).toBe(false);
    expect(valid({ ...rows[0], decision: { ...rows[0]!.decision, label: 'maybe' } })).toBe(false);
    const labels: Record<string, number> = {};
    for (const row of rows) labels[row.decision.label] = (labels[row.decision.label] ?? 0) + 1;
    expect(labels).toEqual(Object.fromEntries(Object.entries(tally.labels).filter(([, n]) => n > 0)));
    // Oldest settlement first, each once.
    expect(new Set(rows.map((row) => row.id)).size).toBe(COUNT);
    const settled = rows.map((row) => row.timings.settledAt);
    expect([...settled].sort()).toEqual(settled);

    const byKind = (label: string, tool: string) => rows.filter((row) => row.decision.label === label && row.tool === tool);
    expect(rows.filter((row) => row.signatures.length === 2)).toHaveLength(tally.quorum);
    expect(rows.filter((row) => row.decision.escalated?.to.includes('manager:max'))).toHaveLength(tally.escalated);
    expect(rows.filter((row) => row.decision.source === 'automatic')).toHaveLength(tally.automatic);
    expect(tally.granted).toBeGreaterThan(0);
    expect(rows.filter((row) => row.decision.source === 'grant')).toHaveLength(tally.granted);
    const edited = byKind('edited', 'refund');
    expect(edited.length).toBeGreaterThan(0);
    for (const row of edited) {
      const asked = row.call.args as { cents: number; card: string };
      const ran = row.decision.editedArgs as { cents: number; card: string };
      expect(ran.cents).toBe(Math.max(1, Math.floor(asked.cents / 2)));
      expect([asked.card, ran.card]).toEqual(['[redacted]', '[redacted]']);
    }
    const expired = byKind('expired', 'transfer')[0] as DecisionRow;
    expect(expired.decision).toMatchObject({ status: 'expired', label: 'expired' });
    const input = byKind('answered', 'ask')[0] as DecisionRow;
    expect(input.kind).toBe('input');
    // The context is the transcript up to the model's turn that made the call, redacted.
    const refund = byKind('approved', 'refund')[0] as DecisionRow;
    const last = refund.context?.messages.at(-1);
    expect(last).toMatchObject({ role: 'assistant', toolCalls: [{ id: refund.callId, name: 'refund' }] });
    expect(JSON.parse((last as { toolCalls: Array<{ arguments: string }> }).toolCalls[0]!.arguments)).toMatchObject({ card: '[redacted]' });
    expect(refund.timings.waitMs).toBeGreaterThanOrEqual(0);
  });

  it('redacts every sensitive value in every format, and without a toolkit redacts the arguments whole', async () => {
    const formats: DecisionFormat[] = ['toolnexus', 'evalite', 'langsmith', 'braintrust'];
    for (const format of formats) {
      const text = (await all(exportDecisions(store, { since: SINCE, toolkit: toolkit(), format })))
        .map((row) => JSON.stringify(row))
        .join('\n');
      expect(text.split('\n')).toHaveLength(COUNT);
      expect(tally.cards.filter((card) => text.includes(card))).toEqual([]);
      expect(text).toContain('[redacted]');
    }
    const blind = await all(exportDecisions(store, { since: SINCE, tools: ['refund'] }));
    expect(blind.every((row) => row.call.args === '[redacted]')).toBe(true);
    expect(tally.cards.filter((card) => JSON.stringify(blind).includes(card))).toEqual([]);
  });

  it('reads the store a bounded page at a time, lazily, and never lists it whole', async () => {
    const { store: watched, pages, whole } = counted(store);
    const iterator = exportDecisions(watched, { since: SINCE, pageSize: 64, toolkit: toolkit() })[Symbol.asyncIterator]();
    expect(pages).toHaveLength(0);
    await iterator.next();
    expect(pages).toHaveLength(1);
    let rows = 1;
    while (!(await iterator.next()).done) rows++;
    expect(rows).toBe(COUNT);
    expect(pages).toHaveLength(Math.ceil(COUNT / 64));
    expect(pages.every((query) => query.limit === 64)).toBe(true);
    expect(whole).toEqual([]);
  });

  it('filters by tool and by the window of settlement', async () => {
    const rows = await all(exportDecisions(store, { since: SINCE, tools: ['wire', 'payout'], context: false }));
    expect(rows).toHaveLength(tally.quorum + tally.escalated);
    expect(rows.every((row) => row.context === undefined)).toBe(true);
    const middle = rows[Math.floor(rows.length / 2)]!.timings.settledAt;
    const before = await all(exportDecisions(store, { since: SINCE, until: middle, tools: ['wire', 'payout'], context: false }));
    const after = await all(exportDecisions(store, { since: middle, tools: ['wire', 'payout'], context: false }));
    expect(before.length + after.length).toBe(rows.length);
    expect(before.every((row) => row.timings.settledAt < middle) && after.every((row) => row.timings.settledAt >= middle)).toBe(true);
  });

  it("reports the shadow rule's confusion table equal to the hand count", async () => {
    const report = await policyReport(store, { policy: 'small-refunds', since: SINCE });
    expect(report.table).toEqual(tally.shadow);
    const agreed = tally.shadow.approved.approved + tally.shadow.approved.edited + tally.shadow.denied.declined;
    const disagreed = tally.shadow.approved.declined + tally.shadow.denied.approved + tally.shadow.denied.edited;
    expect(report).toMatchObject({ agreed, disagreed });
    expect(report.total).toBe(Object.values(tally.shadow).reduce((sum, row) => sum + Object.values(row).reduce((a, b) => a + b, 0), 0));
    expect(agreed).toBeGreaterThan(0);
    expect(disagreed).toBeGreaterThan(0);
    expect(report.agreement).toBeCloseTo(agreed / (agreed + disagreed));
  });
});
