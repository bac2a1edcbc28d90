import { appendFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError } from '../../errors';
import type { PrunableStore, PruneOptions } from '../../runner/durability/retention';
import { storeCommand } from '../command';
import { EXIT } from '../exit-codes';
import { CliProblem } from '../target';

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `prune`: deletes settled suspensions, finished runs (and with them stream logs, keyed calls,
 * A2A tasks and deliveries) and idle sessions older than the ages given, in batches
 * (docs/deploying.md, "Retention"). `--archive FILE` appends every row to
 * FILE as JSON lines before it is deleted.
 */
export const prune = storeCommand({
  path: ['prune'],
  summary:
    'delete old rows in batches: settled suspensions (the audit trail), finished runs and served work (stream logs, keyed calls, A2A tasks, deliveries), idle sessions',
  usage:
    '[--settled-older-than AGE] [--finished-older-than AGE] [--idle-older-than AGE] [--batch-size N] [--max-batches N] [--archive FILE]',
  options: {
    'settled-older-than': { type: 'string' },
    'finished-older-than': { type: 'string' },
    'idle-older-than': { type: 'string' },
    'batch-size': { type: 'string' },
    'max-batches': { type: 'string' },
    archive: { type: 'string' },
  },
  async run({ values, io, open }) {
    const now = Date.now();
    const options: PruneOptions = {
      settledBefore: cutoff(values['settled-older-than'], '--settled-older-than', now),
      finishedBefore: cutoff(values['finished-older-than'], '--finished-older-than', now),
      idleBefore: cutoff(values['idle-older-than'], '--idle-older-than', now),
      batchSize: count(values['batch-size'], '--batch-size'),
      maxBatches: count(values['max-batches'], '--max-batches'),
    };
    if (!options.settledBefore && !options.finishedBefore && !options.idleBefore) {
      throw new CliProblem(
        'prune needs at least one of --settled-older-than, --finished-older-than and --idle-older-than (e.g. 90d)',
        EXIT.usage,
      );
    }
    if (typeof values.archive === 'string') {
      const file = resolve(io.cwd, values.archive);
      options.archive = (batch) => {
        appendFileSync(file, batch.rows.map((row) => `${JSON.stringify({ table: batch.table, row })}\n`).join(''));
      };
    }
    const target = await open();
    const store = target.store as Partial<PrunableStore>;
    if (typeof store.prune !== 'function') throw new CliProblem(`${target.storeShown} cannot prune`, EXIT.failed);
    const report = await store.prune(options).catch((error: unknown) => {
      throw error instanceof InvalidArgumentError ? new CliProblem(error.message, EXIT.usage) : error;
    });
    io.out(
      values.json
        ? JSON.stringify(report)
        : `pruned ${report.suspensions} suspensions, ${report.runs} runs, ${report.sessions} sessions, ${report.streams} stream logs, ` +
            `${report.keyedCalls} keyed calls, ${report.a2aTasks} A2A tasks, ${report.deliveries} deliveries in ${report.batches} batches`,
    );
    return EXIT.ok;
  },
});

/** `90d`, `12h`, `30m`, `45s` before now, or an RFC 3339 instant. */
function cutoff(value: string | boolean | undefined, flag: string, now: number): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const age = /^(\d+)([smhd])$/.exec(value);
  if (age) return new Date(now - Number(age[1]) * (UNITS[age[2] as string] as number));
  const instant = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(value) ? new Date(value) : undefined;
  if (instant && !Number.isNaN(instant.getTime())) return instant;
  throw new CliProblem(`${flag} takes an age (90d, 12h, 30m, 45s) or an RFC 3339 instant, got ${JSON.stringify(value)}`, EXIT.usage);
}

function count(value: string | boolean | undefined, flag: string): number | undefined {
  if (typeof value !== 'string') return undefined;
  if (!/^\d+$/.test(value)) throw new CliProblem(`${flag} takes a whole number, got ${JSON.stringify(value)}`, EXIT.usage);
  return Number(value);
}
