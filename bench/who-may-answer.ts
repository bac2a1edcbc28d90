/**
 * What "who may answer" costs per answer on SQLite (docs/who-may-answer.md): the time of
 * `resolve` alone (the call is recorded beforehand, untimed) for
 *
 *   plain    no policy: read, claim, replay, store the outcome (today's resolve, the baseline);
 *   policy   a rulesPolicy with separation of duties, judged before the claim;
 *   quorum   a 2-of-3 quorum: a first approval (a signature) and a second (signature, claim,
 *            replay, outcome); reported per approval and per call.
 *
 * Variants run interleaved, each round on its own file; the median round is shown.
 *
 *   npm run bench:who
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, pending, pendingOf, success } from 'toolnexus-ts';
import { ResumeCoordinator, rulesPolicy, type AnswerPolicy } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';

const ROUNDS = 11;
const CALLS = 200;

function payTool(quorum: boolean) {
  return defineTool({
    name: 'pay',
    description: 'Pays an invoice once approved',
    inputSchema: { type: 'object', properties: { invoice: { type: 'string' } }, required: ['invoice'] },
    run: (args, ctx) =>
      ctx?.answer
        ? success(`paid ${String(args.invoice)}`)
        : pending({ kind: 'approval', prompt: `Pay ${String(args.invoice)}?`, ...(quorum ? { data: { quorum: { of: 2 } } } : {}) }),
  });
}

const POLICY: AnswerPolicy = rulesPolicy([
  { principals: ['clerk:1', 'clerk:2'], tools: ['refund'] },
  { principals: ['finance:a', 'finance:b', 'finance:c'], tools: ['pay'], kinds: ['approval'] },
]);

type Variant = 'plain' | 'policy' | 'quorum';

/** Microseconds of resolve per call (for quorum: both approvals). */
async function round(variant: Variant, dir: string, n: number): Promise<number> {
  const store = new SqliteStore({ filename: join(dir, `${variant}-${n}.db`) });
  const coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(payTool(variant === 'quorum')),
    store,
    ...(variant === 'plain' ? {} : { policy: POLICY }),
  });
  try {
    const ids: string[] = [];
    for (let i = 0; i < CALLS; i++)
      ids.push(
        pendingOf(await coordinator.execute('pay', { invoice: `inv-${i}` }, undefined, { principal: { id: 'user:requester' } }))!.id,
      );
    const started = process.hrtime.bigint();
    for (const id of ids) {
      if (variant === 'quorum') await coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'finance:a' } });
      await coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'finance:b' } });
    }
    return Number(process.hrtime.bigint() - started) / 1e3 / CALLS;
  } finally {
    await store.close();
  }
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'toolnexus-bench-who-'));
  const samples: Record<Variant, number[]> = { plain: [], policy: [], quorum: [] };
  try {
    for (let n = 0; n < ROUNDS; n++)
      for (const variant of ['plain', 'policy', 'quorum'] as const) samples[variant].push(await round(variant, dir, n));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const plain = median(samples.plain);
  const policy = median(samples.policy);
  const quorum = median(samples.quorum);
  console.log(`resolve on SQLite, median of ${ROUNDS} rounds of ${CALLS} calls (node ${process.version})`);
  console.log(`  plain resolve            ${plain.toFixed(0)} µs per call`);
  console.log(`  with a policy            ${policy.toFixed(0)} µs per call   ${(policy / plain).toFixed(2)}× plain (target ≤ 1.3×)`);
  console.log(
    `  2-of-3 quorum            ${(quorum / 2).toFixed(0)} µs per approval, ${quorum.toFixed(0)} µs per call   ${(quorum / 2 / plain).toFixed(2)}× plain per approval (target ≤ 2.5×)`,
  );
}

void main();
