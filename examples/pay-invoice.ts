/**
 * The full story: an agent is asked to pay an invoice; the payment tool needs a person's
 * approval, so the run halts and is checkpointed in SQLite; later a FRESH PROCESS builds a
 * new runner over the same file and resumes the run from the answer alone; the final
 * transcript is printed. No network: the model is a scripted FunctionModel.
 */
import 'reflect-metadata';
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsInt, IsString, Matches, Min } from 'class-validator';
import { Describe, Tool, Toolkit, failure, pending, success, type Answer } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel, type ChatMessage } from 'toolnexus-ts/models';
import { AgentRunner, type AgentToolContext, type RunResult } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';

// ---- The domain: an accounts-payable service the tools are given --------------------------

class AccountsPayable {
  private readonly invoices = new Map([['INV-7', { payee: 'ACME Corp', cents: 125_000 }]]);

  find(invoice: string) {
    return this.invoices.get(invoice);
  }

  /** `idempotencyKey` is the model's tool-call id: stable across halt and resume, so a retry can never pay twice. */
  pay(invoice: string, cents: number, idempotencyKey: string): string {
    return `PAY-${invoice}-${idempotencyKey}`;
  }
}

class InvoiceArgs {
  @Matches(/^INV-\d+$/) @Describe('Invoice number, e.g. INV-7') invoice!: string;
}

class PaymentArgs {
  @IsString() @Describe('Invoice number') invoice!: string;
  @IsInt() @Min(1) @Describe('Amount in cents') cents!: number;
}

@Tool({ name: 'lookup_invoice', description: 'Finds an invoice: payee and amount due', args: InvoiceArgs })
class LookupInvoiceTool {
  constructor(private readonly payables: AccountsPayable) {}
  run(args: InvoiceArgs) {
    const found = this.payables.find(args.invoice);
    return found ? success({ invoice: args.invoice, ...found }) : failure(`no invoice ${args.invoice}`);
  }
}

@Tool({ name: 'pay_invoice', description: 'Pays an invoice. A person approves every payment.', args: PaymentArgs })
class PayInvoiceTool {
  constructor(private readonly payables: AccountsPayable) {}
  run(args: PaymentArgs, ctx?: AgentToolContext) {
    // Which request was answered, not whether any was: another request's answer is no approval.
    if (ctx?.replay?.request.kind !== 'approval') {
      return pending({
        kind: 'approval',
        prompt: `Approve paying ${euros(args.cents)} for ${args.invoice}?`,
        data: { invoice: args.invoice, cents: args.cents },
      });
    }
    if (!ctx.answer?.ok) return failure(`payment of ${args.invoice} was declined`);
    const reference = this.payables.pay(args.invoice, args.cents, ctx.callId);
    return success({ paid: args.invoice, cents: args.cents, reference, approvedBy: ctx.answer.data?.approver });
  }
}

// ---- The model: scripted, but it reads the transcript the way a real one would --------------

function scriptedModel(): FunctionModel {
  return new FunctionModel(({ messages }) => {
    const results = messages.filter((m) => m.role === 'tool');
    if (results.length === 0) {
      return {
        text: 'Let me look that invoice up.',
        toolCalls: [{ id: 'call_lookup_1', name: 'lookup_invoice', arguments: { invoice: 'INV-7' } }],
      };
    }
    if (results.length === 1) {
      const invoice = JSON.parse(results[0]?.content ?? '{}') as { payee: string; cents: number };
      return {
        text: `INV-7 is ${euros(invoice.cents)} owed to ${invoice.payee}. Paying it now.`,
        toolCalls: [{ id: 'call_pay_1', name: 'pay_invoice', arguments: { invoice: 'INV-7', cents: invoice.cents } }],
      };
    }
    const last = results.at(-1);
    if (!last || last.isError) return `The payment did not go through: ${last?.content ?? 'no result'}.`;
    const payment = JSON.parse(last.content) as { reference: string; approvedBy: string };
    return `Paid INV-7, approved by ${payment.approvedBy}. Bank reference ${payment.reference}.`;
  });
}

/** Everything a process needs to run or resume the agent: the same tools, model and SQLite file. */
function buildAgent(dbFile: string) {
  const payables = new AccountsPayable();
  const toolkit = new Toolkit().register(new LookupInvoiceTool(payables), new PayInvoiceTool(payables));
  const store = new SqliteStore({ filename: dbFile });
  const coordinator = new ResumeCoordinator({ toolkit, store });
  const runner = new AgentRunner({ model: scriptedModel(), toolkit, coordinator, systemPrompt: 'You settle invoices.' });
  return { runner, store };
}

// ---- The story ------------------------------------------------------------------------------

export async function main(): Promise<void> {
  const resumeJob = process.env.PAY_INVOICE_RESUME;
  if (resumeJob) return resumeHere(JSON.parse(resumeJob) as { dbFile: string; answer: Answer });

  const dir = mkdtempSync(join(tmpdir(), 'toolnexus-pay-invoice-'));
  const dbFile = join(dir, 'agent.db');
  try {
    heading(`1. Process ${process.pid} runs the agent until a tool needs approval`);
    const first = buildAgent(dbFile);
    const halted = await first.runner.run('Please pay invoice INV-7.');
    const request = halted.pending;
    if (halted.status !== 'halted' || !request) throw new Error(`expected the run to halt, got ${halted.status}`);
    console.log(`   status   ${halted.status} after ${halted.turns} model turns (run ${halted.runId})`);
    console.log(`   asks     [${request.kind}] ${request.prompt}`);
    console.log(`   id       ${request.id}`);

    const checkpoint = await first.store.loadRun(halted.runId);
    const suspended = await first.store.list({ runId: halted.runId });
    console.log(
      `   SQLite   run checkpoint v${checkpoint?.version} (${String(checkpoint?.state.phase)}); ${suspended.map((s) => `${s.tool} ${s.status}`).join(', ')}`,
    );
    await first.store.close();
    console.log('   The process lets go of everything; only the file remembers the run.');

    heading('2. Hours later, a person approves; a FRESH process resumes from the answer alone');
    const answer: Answer = { id: request.id, ok: true, data: { approver: 'dana@acme.test' } };
    console.log(`   answer   ${JSON.stringify(answer)}`);
    await resumeInFreshProcess(dbFile, answer);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function resumeHere(job: { dbFile: string; answer: Answer }): Promise<void> {
  const { runner, store } = buildAgent(job.dbFile);
  try {
    const final = await runner.resume(job.answer);
    console.log(`   process  ${process.pid} resumed run ${final.runId}: ${final.status} after ${final.turns} model turns`);
    heading('3. The final transcript (one result per tool call, no extra user turn)');
    printTranscript(final);
  } finally {
    await store.close();
  }
}

function resumeInFreshProcess(dbFile: string, answer: Answer): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, [], {
      env: { ...process.env, PAY_INVOICE_RESUME: JSON.stringify({ dbFile, answer }) },
      stdio: 'inherit',
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the resuming process exited with ${String(code)}`))));
  });
}

// ---- Printing ---------------------------------------------------------------------------------

function printTranscript(result: RunResult): void {
  for (const message of result.messages) console.log(describe(message));
  console.log(`\n   ${result.toolCalls.length} tool calls in ${result.turns} model turns; the payment was made once, after the approval.`);
}

function describe(message: ChatMessage): string {
  switch (message.role) {
    case 'user':
      return `   user       ${message.content}`;
    case 'assistant': {
      const calls = (message.toolCalls ?? []).map((c) => `\n              -> ${c.name}(${c.arguments})  [${c.id}]`).join('');
      return `   assistant  ${message.content}${calls}`;
    }
    case 'tool':
      return `   tool       <- [${message.callId}] ${message.isError ? 'ERROR ' : ''}${message.content}`;
  }
}

function heading(text: string): void {
  console.log(`\n== ${text}`);
}

function euros(cents: number): string {
  return `EUR ${(cents / 100).toFixed(2)}`;
}

if (require.main === module) void main();
