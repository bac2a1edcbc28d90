/**
 * Durable approval: a transfer needs a human's approval. The first "process" suspends
 * the call and records it in a SQLite file, then goes away. A second one, started later
 * with nothing but the same file and the same tools, resolves the suspension from the
 * answer alone: the tool replays exactly once, with the answer in its context.
 *
 *   npm run build:examples && node dist-examples/examples/durable-approval.js
 */
import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Describe, Tool, Toolkit, failure, pending, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';

class TransferArgs {
  @IsString() @Describe('Account to debit') from!: string;
  @IsString() @Describe('Account to credit') to!: string;
  @IsInt() @Min(1) @Describe('Amount in cents') amount!: number;
}

/** Stands in for a real ledger; counts transfers so the demo can show "exactly once". */
class Ledger {
  transfers = 0;
  move(args: TransferArgs, requestId: string): string {
    this.transfers++;
    return `moved ${(args.amount / 100).toFixed(2)} EUR from ${args.from} to ${args.to} (idempotency key ${requestId})`;
  }
}

@Tool({ name: 'transfer', description: 'Move money between two accounts', args: TransferArgs })
class TransferTool {
  constructor(private readonly ledger: Ledger) {}

  run(args: TransferArgs, ctx?: ToolContext) {
    // Which request was answered, not whether any was: another request's answer is no approval.
    if (ctx?.replay?.request.kind !== 'approval') {
      return pending({ kind: 'approval', prompt: `Transfer ${(args.amount / 100).toFixed(2)} EUR from ${args.from} to ${args.to}?` });
    }
    if (!ctx.answer?.ok) return failure('transfer declined');
    // The request id is the same on every replay of this suspension: key side effects on it.
    return success(`${this.ledger.move(args, ctx.answer.id)}, approved by ${String(ctx.answer.data?.approver)}`);
  }
}

/** What one process builds at start-up: its tools and a coordinator on the shared file. */
function startProcess(file: string, ledger: Ledger): ResumeCoordinator {
  const toolkit = new Toolkit({ resolver: () => new TransferTool(ledger) }).register(TransferTool);
  return new ResumeCoordinator({ toolkit, store: new SqliteStore({ filename: file }) });
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`durable-approval example: ${what}`);
}

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'toolnexus-durable-approval-'));
  const file = join(dir, 'suspensions.db');
  try {
    console.log('── Durable approval: suspend in one process, resolve in another ─────────');
    console.log(`  store: ${file}\n`);

    // Process 1: the agent calls the tool; it suspends and the call is recorded.
    const ledger1 = new Ledger();
    const first = startProcess(file, ledger1);
    const suspended = await first.execute('transfer', { from: 'ACME-OPS', to: 'SUPPLIER-17', amount: 125_000 }, undefined, {
      runId: 'run-42',
      callId: 'call_1',
    });
    const request = pendingOf(suspended);
    check(request !== undefined, 'the first call should suspend');
    console.log('  [process 1] the tool suspends, waiting for a human:');
    console.log(`              ${suspended.output}`);
    console.log(`              request id ${request!.id} (kind: ${request!.kind})`);
    await first.store.close();
    console.log('  [process 1] exits; nothing but the SQLite file remains\n');

    // Process 2: started later, knows only the file and the answer that arrived by webhook.
    const ledger2 = new Ledger();
    const second = startProcess(file, ledger2);
    const open = await second.list({ status: 'pending' });
    console.log(`  [process 2] finds ${open.length} pending call(s): ${open.map((c) => `${c.tool} ${JSON.stringify(c.args)}`).join(', ')}`);
    const answer = { id: request!.id, ok: true, data: { approver: 'dana@finance' } };
    const result = await second.resolve(answer);
    console.log('  [process 2] an approval arrives; the tool replays with the answer:');
    console.log(`              → ${result.isError ? '✗' : '✓'} ${result.output}`);

    const again = await second.resolve(answer);
    const stored = await second.get(request!.id);
    console.log(
      `  [process 2] the same answer again returns the stored outcome; the tool ran ${ledger1.transfers + ledger2.transfers} time in all`,
    );
    console.log(
      `              status: ${String(stored?.status)}, same outcome: ${String(JSON.stringify(again) === JSON.stringify(result))}\n`,
    );
    check(!result.isError && result.output.includes('approved by dana@finance'), 'the replay should succeed with the answer');
    check(
      JSON.stringify(again) === JSON.stringify(result) && ledger1.transfers + ledger2.transfers === 1,
      'the transfer should happen exactly once',
    );
    await second.store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) void main();
