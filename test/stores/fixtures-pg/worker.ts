/**
 * A worker process of the PostgreSQL cross-process tests: a
 * ResumeCoordinator over a PostgresPendingStore, with one tool, `ship`, whose replay writes
 * a row to a side-effect table (`<schema>.effects`), so the parent can count how many
 * times each suspension really ran.
 *
 * Started with `node -r test/fixtures/register-ts.js worker.ts '<json WorkerConfig>'` and an IPC channel:
 * it sends `ready`, waits for `{ type: 'go', ids }`, resolves every id (in its own shuffled
 * order, `concurrency` at a time), sends `done` with what it saw, and exits. With
 * `hangOnReplay`, the replay records a `started` effect, sends `replaying`, and never ends
 * (the parent SIGKILLs it mid-replay).
 */
import 'reflect-metadata';
import { Pool } from 'pg';
import { AlreadyResolvedError, PostgresPendingStore, ResumeCoordinator, StoreUnavailableError, Toolkit, defineTool, pending, success } from '../../../src';
import { shuffled } from '../../fixtures/shuffled';

export interface WorkerConfig {
  url: string;
  schema: string;
  tablePrefix: string;
  leaseMs?: number;
  concurrency?: number;
  hangOnReplay?: boolean;
  /** `decline` answers `{ ok: false }`; an answer that conflicts with the stored outcome is reported as `AlreadyResolvedError:<status>`. */
  answer?: 'approve' | 'decline';
}

export type ParentMessage = { type: 'go'; ids: string[] };
export type WorkerMessage =
  | { type: 'ready'; pid: number }
  | { type: 'replaying'; id: string; pid: number }
  | { type: 'done'; pid: number; replays: number; outcomes: Record<string, string>; elapsedMs: number }
  | { type: 'failed'; pid: number; error: string; name: string };

/** Creates the side-effect table a worker's `ship` tool writes to. */
export const EFFECTS_DDL = (schema: string) =>
  `CREATE TABLE IF NOT EXISTS "${schema}".effects (suspension_id text NOT NULL, worker integer NOT NULL, phase text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`;

/** The tool every worker and the parent register: suspends first, ships on the replay. */
export function shipTool(effects: Pool, schema: string, onReplay: (id: string) => Promise<void> = async () => undefined) {
  return defineTool({
    name: 'ship',
    description: 'Ships an order once a human approved it',
    inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
    async run(args, ctx) {
      if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Ship order ${String(args.order)}?` });
      await onReplay(ctx.answer.id);
      await effects.query(`INSERT INTO "${schema}".effects (suspension_id, worker, phase) VALUES ($1, $2, 'shipped')`, [ctx.answer.id, process.pid]);
      return success(`shipped ${String(args.order)} by ${process.pid}`);
    },
  });
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
  const send = (message: WorkerMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));
  const effects = new Pool({ connectionString: config.url, max: 4 });
  effects.on('error', () => undefined);
  const store = new PostgresPendingStore({ connectionString: config.url, schema: config.schema, tablePrefix: config.tablePrefix, poolConfig: { max: 4 } });
  let replays = 0;
  const tool = shipTool(effects, config.schema, async (id) => {
    replays++;
    if (!config.hangOnReplay) return;
    await effects.query(`INSERT INTO "${config.schema}".effects (suspension_id, worker, phase) VALUES ($1, $2, 'started')`, [id, process.pid]);
    await send({ type: 'replaying', id, pid: process.pid });
    await new Promise<never>(() => undefined);
  });
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(tool), store, leaseMs: config.leaseMs });
  await store.ensureSchema();

  const go = await new Promise<ParentMessage>((resolve) => {
    process.on('message', (message: ParentMessage) => {
      if (message.type === 'go') resolve(message);
    });
    void send({ type: 'ready', pid: process.pid });
  });

  const started = Date.now();
  const queue = shuffled(go.ids);
  const outcomes: Record<string, string> = {};
  const lanes = Array.from({ length: config.concurrency ?? 4 }, async () => {
    for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
      try {
        const result = await coordinator.resolve(config.answer === 'decline' ? { id, ok: false, reason: 'declined' } : { id, ok: true, data: { approver: 'ops' } });
        outcomes[id] = result.output;
      } catch (error) {
        if (!(error instanceof AlreadyResolvedError)) throw error;
        outcomes[id] = `AlreadyResolvedError:${error.status}`;
      }
    }
  });
  try {
    await Promise.all(lanes);
    await send({ type: 'done', pid: process.pid, replays, outcomes, elapsedMs: Date.now() - started });
  } catch (error) {
    const name = error instanceof StoreUnavailableError ? 'StoreUnavailableError' : error instanceof Error ? error.name : 'unknown';
    await send({ type: 'failed', pid: process.pid, error: error instanceof Error ? error.message : String(error), name });
  } finally {
    await store.close();
    await effects.end();
    process.disconnect();
  }
}

if (require.main === module) void main();
