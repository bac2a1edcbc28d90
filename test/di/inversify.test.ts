import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { Container, inject, injectable } from 'inversify';
import { Describe, Tool, Toolkit, failure, pending, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

@injectable()
class BankService {
  readonly transfers: string[] = [];
  transfer(from: string, to: string, amount: number): string {
    this.transfers.push(`${from}->${to}:${amount}`);
    return `moved ${amount}`;
  }
}

const APPROVER = Symbol.for('Approver');
interface Approver {
  readonly name: string;
}

class TransferArgs {
  @IsString() @Describe('Account to debit') from!: string;
  @IsString() @Describe('Account to credit') to!: string;
  @IsInt() @Min(1) @Describe('Amount in cents') amount!: number;
}

@injectable()
@Tool({ name: 'transfer', description: 'Move money between two accounts', args: TransferArgs })
class TransferTool {
  constructor(
    @inject(BankService) private readonly bank: BankService,
    @inject(APPROVER) private readonly approver: Approver,
  ) {}
  run(args: TransferArgs, ctx?: ToolContext) {
    if (!ctx?.answer) return pending({ kind: 'approval', prompt: `${this.approver.name}: transfer ${args.amount} from ${args.from}?` });
    if (!ctx.answer.ok) return failure('transfer declined');
    return success(this.bank.transfer(args.from, args.to, args.amount));
  }
}

@injectable()
@Tool({ name: 'audited', description: 'Needs an audit sink nobody bound' })
class AuditedTool {
  constructor(@inject(Symbol.for('AuditSink')) readonly sink: object) {}
  run() {
    return 'ok';
  }
}

function appContainer(): Container {
  const container = new Container();
  container.bind(BankService).toSelf().inSingletonScope();
  container.bind<Approver>(APPROVER).toConstantValue({ name: 'treasury' });
  // Tools are bound like any service; the Toolkit keeps the one instance it is given.
  container.bind(TransferTool).toSelf().inSingletonScope();
  container.bind(AuditedTool).toSelf();
  return container;
}

describe('InversifyJS as the Toolkit resolver', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolnexus-inversify-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('builds tools with constructor-injected services, the same instance the container hands out', async () => {
    const container = appContainer();
    const toolkit = new Toolkit({ resolver: (cls) => container.get(cls) }).register(TransferTool);
    expect(toolkit.get('transfer')?.instance).toBe(container.get(TransferTool));
    const first = await toolkit.execute('transfer', { from: 'acc-1', to: 'acc-2', amount: 700 });
    expect(pendingOf(first)?.prompt).toBe('treasury: transfer 700 from acc-1?');
    const invalid = await toolkit.execute('transfer', { from: 'acc-1', to: 'acc-2', amount: 0 });
    expect(invalid.output).toMatch(/^invalid arguments for transfer: .*amount/);
    expect(container.get(BankService).transfers).toEqual([]);
  });

  it('resumes a suspension recorded in SQLite from a second container, as a restarted process would', async () => {
    const filename = join(dir, 'suspensions.db');
    const before = appContainer();
    const toolkitBefore = new Toolkit({ resolver: (cls) => before.get(cls) }).register(TransferTool);
    const storeBefore = new SqliteStore({ filename });
    const first = await new ResumeCoordinator({ toolkit: toolkitBefore, store: storeBefore }).execute('transfer', {
      from: 'acc-1',
      to: 'acc-2',
      amount: 700,
    });
    const request = pendingOf(first);
    await storeBefore.close();

    const after = appContainer();
    const toolkitAfter = new Toolkit({ resolver: (cls) => after.get(cls) }).register(TransferTool);
    const storeAfter = new SqliteStore({ filename });
    try {
      const coordinator = new ResumeCoordinator({ toolkit: toolkitAfter, store: storeAfter });
      const answer = { id: request?.id ?? '', ok: true };
      expect(await coordinator.resolve(answer)).toEqual({ output: 'moved 700', isError: false });
      expect(await coordinator.resolve(answer)).toEqual({ output: 'moved 700', isError: false });
      expect(after.get(BankService).transfers).toEqual(['acc-1->acc-2:700']);
      expect(before.get(BankService).transfers).toEqual([]);
    } finally {
      await storeAfter.close();
    }
  });

  it('fails registration clearly when the container cannot build a tool, and keeps the other tools', () => {
    const container = appContainer();
    const toolkit = new Toolkit({ resolver: (cls) => container.get(cls) }).register(TransferTool);
    expect(() => toolkit.register(AuditedTool)).toThrow(/AuditSink/);
    expect(toolkit.tools().map((t) => t.name)).toEqual(['transfer']);
  });
});
