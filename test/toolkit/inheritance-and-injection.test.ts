import 'reflect-metadata';
import { IsInt, IsOptional, IsString, Min } from 'class-validator';
import { container, injectable, singleton } from 'tsyringe';
import { Describe, Tool, Toolkit, authRequired, failure, pendingOf, success, type ToolContext, type ToolResult } from 'toolnexus-ts';

/** A service that knows who is logged in; injected into tools by the container. */
@singleton()
class SessionService {
  private readonly sessions = new Map<string, string>([['s-1', 'ada']]);
  userFor(sessionId: string | undefined): string | undefined {
    return sessionId ? this.sessions.get(sessionId) : undefined;
  }
}

@injectable()
class TicketRepository {
  readonly created: Array<{ by: string; title: string }> = [];
  create(by: string, title: string): number {
    this.created.push({ by, title });
    return this.created.length;
  }
}

type SessionContext = ToolContext<{ sessionId?: string }>;

/** Base DTO every command shares, as enterprise services do. */
class AuditedArgs {
  @IsString() @Describe('Why this is done, for the audit log') reason!: string;
}

class CreateTicketArgs extends AuditedArgs {
  @IsString() @Describe('Ticket title') title!: string;
  @IsOptional() @IsInt() @Min(1) priority?: number;
}

class CloseTicketArgs extends AuditedArgs {
  @IsInt() @Min(1) ticket!: number;
}

/** Checks the session once for every tool that extends it. */
abstract class AuthenticatedTool<TArgs extends AuditedArgs> {
  constructor(protected readonly sessions: SessionService) {}

  async run(args: TArgs, ctx?: SessionContext): Promise<ToolResult> {
    const user = this.sessions.userFor(ctx?.sessionId);
    if (!user) return authRequired('https://sso.example.com/login', 'Please sign in to the ticket system');
    return this.runAs(user, args);
  }

  protected abstract runAs(user: string, args: TArgs): Promise<ToolResult> | ToolResult;
}

@injectable()
@Tool({ description: 'Create a ticket', args: CreateTicketArgs })
class CreateTicketTool extends AuthenticatedTool<CreateTicketArgs> {
  constructor(
    sessions: SessionService,
    private readonly tickets: TicketRepository,
  ) {
    super(sessions);
  }
  protected runAs(user: string, args: CreateTicketArgs) {
    return success({ id: this.tickets.create(user, args.title), by: user });
  }
}

@injectable()
@Tool({ description: 'Close a ticket', args: CloseTicketArgs })
class CloseTicketTool extends AuthenticatedTool<CloseTicketArgs> {
  // tsyringe reads constructor types from the decorated class itself, so it declares them.
  constructor(sessions: SessionService) {
    super(sessions);
  }
  protected runAs(user: string, args: CloseTicketArgs) {
    return args.ticket > 100 ? failure(`ticket ${args.ticket} not found`) : success(`closed ${args.ticket} by ${user}`);
  }
}

describe('enterprise tools: shared base classes, DTO inheritance, tsyringe injection', () => {
  const child = container.createChildContainer();
  const toolkit = new Toolkit({ resolver: (cls) => child.resolve(cls) }).register(CreateTicketTool, CloseTicketTool);

  it('resolves tools through tsyringe with constructor-injected services', async () => {
    const r = await toolkit.execute('create_ticket', { reason: 'customer call', title: 'Printer down' }, { sessionId: 's-1' });
    expect(r).toEqual({ output: '{"id":1,"by":"ada"}', isError: false });
    expect(child.resolve(TicketRepository)).not.toBe(undefined);
  });

  it('the abstract base suspends with authRequired when there is no session', async () => {
    for (const name of ['create_ticket', 'close_ticket']) {
      const args = name === 'create_ticket' ? { reason: 'r', title: 't' } : { reason: 'r', ticket: 1 };
      const r = await toolkit.execute(name, args, { sessionId: 'unknown' });
      expect(pendingOf(r)).toMatchObject({
        kind: 'authorization',
        url: 'https://sso.example.com/login',
        prompt: 'Please sign in to the ticket system',
      });
      expect(r.output).toBe('Please sign in to the ticket system\nhttps://sso.example.com/login');
    }
  });

  it('the inherited DTO constraints apply and appear in the schema', async () => {
    const schema = toolkit.get('close_ticket')!.inputSchema;
    expect(schema.required).toEqual(['reason', 'ticket']);
    expect(schema.properties!.reason).toEqual({ description: 'Why this is done, for the audit log', type: 'string' });
    expect(await toolkit.execute('close_ticket', { ticket: 3 }, { sessionId: 's-1' })).toEqual({
      output: 'invalid arguments for close_ticket: reason: reason must be a string',
      isError: true,
    });
    expect(await toolkit.execute('close_ticket', { reason: 'done', ticket: 3 }, { sessionId: 's-1' })).toEqual({
      output: 'closed 3 by ada',
      isError: false,
    });
  });
});
