/**
 * What durable steps cost on SQLite: the same 5-turn run (each turn one idempotent call
 * and one that is not, the fifth the answer) with `durability: 'halt'` (nothing written:
 * the run never suspends) and `durability: 'step'` (a write at the start, after each
 * response, before the non-idempotent call and after each result), on a file with
 * `synchronous: 'normal'` and with `'full'`. Printed: each checkpoint write's p50 / p99
 * (the store's `saveRun`, timed around the call), writes per turn, and the whole run's p50
 * per mode, so the cost per turn is the difference over five turns. Variants interleave.
 *
 *   npm run bench:durability
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, success, type JsonSchema } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner, type RunStore } from 'toolnexus-ts/agents';
import { SqliteStore, type SqliteStoreOptions } from 'toolnexus-ts/sqlite';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const TURNS = 5;

const schema = (): JsonSchema => ({ type: 'object', properties: { ref: { type: 'string' } }, required: ['ref'] });
const lookup = defineTool({
  name: 'lookup',
  description: 'Reads',
  inputSchema: schema(),
  idempotent: true,
  run: (a) => success({ ref: String(a.ref) }),
});
const transfer = defineTool({
  name: 'transfer',
  description: 'Moves',
  inputSchema: schema(),
  run: (a) => success({ moved: String(a.ref) }),
});

const model = new FunctionModel(({ messages }) => {
  const turn = messages.filter((m) => m.role === 'assistant').length;
  if (turn >= TURNS - 1) return 'done';
  return {
    toolCalls: [
      { id: `l${turn}`, name: 'lookup', arguments: { ref: `a${turn}` } },
      { id: `t${turn}`, name: 'transfer', arguments: { ref: `t${turn}` } },
    ],
  };
});

interface Variant {
  name: string;
  runner: AgentRunner;
  writes: number[];
  runs: number[];
  store: SqliteStore;
}

function variant(dir: string, durability: 'halt' | 'step', synchronous: SqliteStoreOptions['synchronous']): Variant {
  const store = new SqliteStore({ filename: join(dir, `${durability}-${synchronous}.db`), synchronous });
  const writes: number[] = [];
  const runs: RunStore = {
    async saveRun(checkpoint) {
      const started = process.hrtime.bigint();
      const saved = await store.saveRun(checkpoint);
      writes.push(Number(process.hrtime.bigint() - started) / 1e6);
      return saved;
    },
    loadRun: (runId) => store.loadRun(runId),
  };
  const toolkit = new Toolkit().register(lookup, transfer);
  const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }), runs, durability });
  return { name: `${durability} (synchronous ${synchronous})`, runner, writes, runs: [], store };
}

function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'toolnexus-bench-durability-'));
  const variants = [variant(dir, 'halt', 'normal'), variant(dir, 'step', 'normal'), variant(dir, 'step', 'full')];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const v of variants) {
        for (let i = 0; i < RUNS; i++) {
          const started = process.hrtime.bigint();
          const result = await v.runner.run('go', { runId: `r-${round}-${i}` });
          if (result.status !== 'done' || result.turns !== TURNS)
            throw new Error(`unexpected ${result.status} after ${result.turns} turns`);
          if (round > 0) v.runs.push(Number(process.hrtime.bigint() - started) / 1e6); // round 0 warms up
        }
      }
    }
    const halt = quantile((variants[0] as Variant).runs, 0.5);
    console.log(`${RUNS * (ROUNDS - 1)} runs of ${TURNS} turns per variant (2 calls a turn for 4 turns)`);
    for (const v of variants) {
      const run = quantile(v.runs, 0.5);
      const perTurn = (run - halt) / TURNS;
      const writes = v.writes.length / (RUNS * ROUNDS) / TURNS;
      console.log(
        `${v.name.padEnd(26)} run p50 ${run.toFixed(2)} ms | per turn +${perTurn.toFixed(2)} ms | ` +
          (v.writes.length
            ? `write p50 ${quantile(v.writes, 0.5).toFixed(3)} ms p99 ${quantile(v.writes, 0.99).toFixed(3)} ms, ${writes.toFixed(1)} writes/turn`
            : 'no writes'),
      );
    }
  } finally {
    for (const v of variants) await v.store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
