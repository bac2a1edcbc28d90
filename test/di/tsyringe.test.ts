import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { container as rootContainer, inject, injectable, Lifecycle, type DependencyContainer } from 'tsyringe';
import { Describe, Tool, Toolkit, failure, pending, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';

/** The service the tool depends on; a singleton, so the test can see every move. */
@injectable()
class BankService {
  readonly transfers: string[] = [];
  transfer(from: string, to: string, amount: number): string {
    this.transfers.push(`${from}->${to}:${amount}`);
    return `moved ${amount}`;
  }
}

const CURRENCY = Symbol('Currency');

class TransferArgs {
  @IsString() @Describe('Account to debit') from!: string;
  @IsString() @Describe('Account to credit') to!: string;
  @IsInt() @Min(1) @Describe('Amount in cents') amount!: number;
}

@injectable()
@Tool({ name: 'transfer', description: 'Move money between two accounts', args: TransferArgs })
class TransferTool {
  constructor(
    private readonly bank: BankService,
    @inject(CURRENCY) private readonly currency: string,
  ) {}
  run(args: TransferArgs, ctx?: ToolContext) {
    if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Transfer ${args.amount} ${this.currency} from ${args.from}?` });
    if (!ctx.answer.ok) return failure('transfer declined');
    return success(this.bank.transfer(args.from, args.to, args.amount));
  }
}

/** Needs a token nobody registered: resolving it must fail at registration. */
const AUDIT_SINK = Symbol('AuditSink');
@injectable()
@Tool({ name: 'audited', description: 'Needs an audit sink' })
class AuditedTool {
  constructor(@inject(AUDIT_SINK) readonly sink: { write(line: string): void }) {}
  run() {
    return 'ok';
  }
}

function appContainer(): DependencyContainer {
  // A child container per test: no state leaks through tsyringe's global root.
  const container = rootContainer.createChildContainer();
  container.register(BankService, { useClass: BankService }, { lifecycle: Lifecycle.ContainerScoped });
  container.register(CURRENCY, { useValue: 'EUR' });
  return container;
}

describe('tsyringe as the Toolkit resolver', () => {
  it('builds tools with constructor-injected services and runs them', async () => {
    const container = appContainer();
    const toolkit = new Toolkit({ resolver: (cls) => container.resolve(cls) }).register(TransferTool);
    const first = await toolkit.execute('transfer', { from: 'acc-1', to: 'acc-2', amount: 500 });
    expect(pendingOf(first)?.prompt).toBe('Transfer 500 EUR from acc-1?');
    expect(container.resolve(BankService).transfers).toEqual([]);
  });

  it('suspends, resumes once through the coordinator, and calls the injected service once', async () => {
    const container = appContainer();
    const toolkit = new Toolkit({ resolver: (cls) => container.resolve(cls) }).register(TransferTool);
    const coordinator = new ResumeCoordinator({ toolkit });
    const first = await coordinator.execute('transfer', { from: 'acc-1', to: 'acc-2', amount: 500 });
    const request = pendingOf(first);
    expect(request).toBeDefined();
    expect((await coordinator.list({ status: 'pending' })).map((c) => c.request.id)).toEqual([request?.id]);

    const answer = { id: request?.id ?? '', ok: true };
    const [a, b] = await Promise.all([coordinator.resolve(answer), coordinator.resolve(answer)]);
    expect(a).toEqual({ output: 'moved 500', isError: false });
    expect(b).toEqual(a);
    expect(container.resolve(BankService).transfers).toEqual(['acc-1->acc-2:500']);
    expect((await coordinator.get(answer.id))?.status).toBe('resolved');
  });

  it('gives each child container its own services (per-tenant toolkits)', async () => {
    const tenantA = appContainer();
    const tenantB = appContainer();
    tenantB.register(CURRENCY, { useValue: 'USD' });
    const toolkitA = new Toolkit({ resolver: (cls) => tenantA.resolve(cls) }).register(TransferTool);
    const toolkitB = new Toolkit({ resolver: (cls) => tenantB.resolve(cls) }).register(TransferTool);
    expect(pendingOf(await toolkitA.execute('transfer', { from: 'x', to: 'y', amount: 1 }))?.prompt).toContain('EUR');
    expect(pendingOf(await toolkitB.execute('transfer', { from: 'x', to: 'y', amount: 1 }))?.prompt).toContain('USD');
    await toolkitA.execute('transfer', { from: 'x', to: 'y', amount: 1 }, { answer: { id: 'a', ok: true } });
    expect(tenantA.resolve(BankService).transfers).toHaveLength(1);
    expect(tenantB.resolve(BankService).transfers).toHaveLength(0);
  });

  it('fails registration clearly when the container cannot build a tool, and keeps the other tools', async () => {
    const container = appContainer();
    const toolkit = new Toolkit({ resolver: (cls) => container.resolve(cls) }).register(TransferTool);
    expect(() => toolkit.register(AuditedTool)).toThrow(/AuditedTool/);
    expect(toolkit.has('audited')).toBe(false);
    expect(toolkit.tools().map((t) => t.name)).toEqual(['transfer']);

    container.register(AUDIT_SINK, { useValue: { write: () => undefined } });
    toolkit.register(AuditedTool);
    expect(await toolkit.execute('audited', {})).toEqual({ output: 'ok', isError: false });
  });
});
