/**
 * Two principals sign a 2-of-3 quorum from two processes at the same instant, on SQLite and on
 * PostgreSQL (docs/who-may-answer.md, "Quorum"): both signatures are recorded, exactly one of
 * them completes the quorum and replays the call, once; the other is told the call waited.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pendingOf } from 'toolnexus-ts';
import { outputOf, startChild, until } from '../fixtures/children';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';
import { openQuorumStore, quorumCoordinator } from '../fixtures/quorum-tools';

jest.setTimeout(120_000);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-quorum-race-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function race(spec: string): Promise<void> {
  const log = join(dir, 'runs.log');
  const store = openQuorumStore(spec);
  try {
    const coordinator = quorumCoordinator(store);
    const id = pendingOf(await coordinator.execute('wire', { cents: 250 }))!.id;
    for (let round = 0; round < 3; round++) {
      // Three rounds of the race, each on a fresh call, so either ordering is likely seen.
      const call = round === 0 ? id : pendingOf(await coordinator.execute('wire', { cents: 250 + round }))!.id;
      const go = join(dir, `go-${round}`);
      const ready = (who: string) => join(dir, `ready-${round}-${who}`);
      const children = ['finance:a', 'finance:b'].map((who) =>
        startChild('quorum-child.ts', [spec, call, who], { QUORUM_LOG: log, GO_FILE: go, READY_FILE: ready(who) }),
      );
      await until(() => existsSync(ready('finance:a')) && existsSync(ready('finance:b')), 60_000, 'both signers ready');
      writeFileSync(go, '');
      const results = await Promise.all(children.map((child, i) => outputOf<{ output: string; pending: boolean }>(child, `signer ${i}`)));
      expect(results.map((r) => r.pending).sort()).toEqual([false, true]);
      expect(results.find((r) => !r.pending)?.output).toBe(`{"wired":${250 + round}}`);
      const stored = await store.get(call);
      expect(stored?.status).toBe('resolved');
      expect(stored?.signatures?.map((s) => s.by.id).sort()).toEqual(['finance:a', 'finance:b']);
    }
    const runs = readFileSync(log, 'utf8').trim().split('\n');
    expect(runs).toHaveLength(3);
    for (const line of runs) expect(line.split(' ')[1]?.split(',').sort()).toEqual(['finance:a', 'finance:b']);
  } finally {
    await store.close();
  }
}

it('on SQLite: one replay, both signatures', async () => {
  await race(`sqlite:${join(dir, 'quorum.db')}`);
});

it('on PostgreSQL: one replay, both signatures', async () => {
  const url = await postgresUrl();
  const schema = uniqueSchema('quorum');
  try {
    await race(`pg:${url}#${schema}`);
  } finally {
    await dropSchema(url, schema);
  }
});
