/**
 * exportDecisions' options (docs/operating.md, "Decisions as evaluation data"): malformed ones
 * and a store without a paged read refused at once, with the option named; the context's bound
 * (the latest messages within a character budget, `truncated` when anything was left out).
 */
import { InvalidArgumentError } from 'toolnexus-ts';
import { MemoryStore } from 'toolnexus-ts/memory';
import type { SuspensionStore } from 'toolnexus-ts/suspension';
import { exportDecisions, type DecisionRow } from 'toolnexus-ts/decisions';
import { seedDecisions, toolkit } from '../fixtures/decisions';

const SINCE = '2000-01-01T00:00:00Z';

async function all<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

it('refuses malformed options and a store without settledPage at once, naming what is wrong', () => {
  const store = new MemoryStore();
  const refused = (options: unknown, message: RegExp, on: SuspensionStore = store) => {
    let thrown: unknown;
    try {
      exportDecisions(on, options as { since: string });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidArgumentError);
    expect((thrown as Error).message).toMatch(message);
  };
  refused({}, /since must be an RFC 3339 instant/);
  refused({ since: 'last week' }, /since must be an RFC 3339 instant/);
  refused({ since: SINCE, until: 12 }, /until must be an RFC 3339 instant/);
  refused({ since: SINCE, format: 'csv' }, /format must be toolnexus, evalite, langsmith or braintrust/);
  refused({ since: SINCE, tools: 'refund' }, /tools must be an array/);
  refused({ since: SINCE, pageSize: 0 }, /pageSize must be a whole number from 1 to 1000/);
  refused({ since: SINCE, pageSize: 1001 }, /pageSize must be a whole number from 1 to 1000/);
  refused({ since: SINCE, context: { maxChars: -1 } }, /context.maxChars must be a whole number/);
  refused({ since: SINCE, toolkit: {} }, /toolkit must be a Toolkit/);
  // A store of one's own without the optional paged read.
  const bare = { insert: store.insert.bind(store), get: store.get.bind(store) } as unknown as SuspensionStore;
  refused({ since: SINCE }, /the store has no settledPage/, bare);
});

it('keeps the latest messages within the bound, and says when it left some out', async () => {
  const store = new MemoryStore();
  await seedDecisions(store, 40);
  const rows = await all(exportDecisions(store, { since: SINCE, toolkit: toolkit(), tools: ['refund'] }));
  const last = rows.at(-1) as DecisionRow;
  const whole = last.context!;
  expect(whole.truncated).toBe(false);
  const bounded = (
    await all(exportDecisions(store, { since: SINCE, toolkit: toolkit(), tools: ['refund'], context: { maxMessages: 3 } }))
  ).at(-1)!;
  expect(bounded.context).toEqual({ messages: whole.messages.slice(-3), truncated: true });
  const chars = 400;
  const small = (
    await all(exportDecisions(store, { since: SINCE, toolkit: toolkit(), tools: ['refund'], context: { maxChars: chars } }))
  ).at(-1)!;
  expect(small.context!.truncated).toBe(true);
  expect(JSON.stringify(small.context!.messages).length).toBeLessThanOrEqual(chars + small.context!.messages.length + 2);
  expect(small.context!.messages.at(-1)).toEqual(whole.messages.at(-1));
  const none = (await all(exportDecisions(store, { since: SINCE, tools: ['refund'], context: false }))).at(-1)!;
  expect(none.context).toBeUndefined();
});
