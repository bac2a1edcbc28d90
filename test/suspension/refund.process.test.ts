/**
 * docs/suspension.md, "A refund that needs a login and an approval": asked in one process,
 * each answer arriving in another, in either order the tool asks them. Money moves once,
 * after both, and never on a login alone.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PendingRequest, ToolResult } from 'toolnexus-ts';
import { outputOf, startChild } from '../fixtures/children';

interface Printed {
  request?: PendingRequest;
  outcome?: ToolResult;
  pid: number;
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-refund-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const child = (args: string[]) => outputOf<Printed>(startChild('refund-child.ts', args), args[0] as string);
const ledgerOf = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

function answerTo(request: PendingRequest) {
  return JSON.stringify(
    request.kind === 'authorization'
      ? { id: request.id, ok: true, data: { account: 'bob@example.com' } }
      : { id: request.id, ok: true, data: { approver: 'dana' } },
  );
}

describe.each([
  ['refund', ['approval', 'authorization']],
  ['refund_by_hand', ['authorization', 'approval']],
])('%s across three processes', (tool, kinds) => {
  it(`asks ${kinds.join(' then ')}; each answer in its own process; money moves once, after both`, async () => {
    const db = join(dir, `${tool}.db`);
    const ledger = join(dir, `${tool}.ledger`);
    const asked = await child(['ask', db, ledger, tool, JSON.stringify({ customer: 'c-1', cents: 99_900 })]);
    expect(asked.request?.kind).toBe(kinds[0]);

    const first = await child(['answer', db, ledger, answerTo(asked.request!)]);
    expect(first.pid).not.toBe(asked.pid);
    expect(first.request?.kind).toBe(kinds[1]);
    expect(ledgerOf(ledger)).toEqual([]); // one answer, login or approval, never moves money

    // The first answer again, from yet another process: the same next link, nothing runs.
    const repeated = await child(['answer', db, ledger, answerTo(asked.request!)]);
    expect(repeated.request).toEqual(first.request);

    const second = await child(['answer', db, ledger, answerTo(first.request!)]);
    expect(second.outcome).toEqual({ output: 'refunded 99900 cents to c-1 for bob@example.com', isError: false });
    const paid = ledgerOf(ledger);
    expect(paid).toHaveLength(1);
    expect(paid[0]).toBe(`${asked.request!.id} c-1 99900 dana ${second.pid}`);
  });
});
