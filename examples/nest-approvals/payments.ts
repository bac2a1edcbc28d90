import { Inject, Injectable, Scope } from '@nestjs/common';
import { REQUEST } from '@nestjs/core';
import { IsInt, IsString, Min } from 'class-validator';
import { Describe, Tool, failure, pending, success, type ToolContext } from 'toolnexus-ts';

/** The bank: an ordinary Nest provider the tool depends on. */
@Injectable()
export class LedgerService {
  private readonly balances = new Map<string, number>([
    ['acc-1', 10_000],
    ['acc-2', 0],
  ]);
  readonly transfers: Array<{ from: string; to: string; amount: number }> = [];

  transfer(from: string, to: string, amount: number): string {
    const available = this.balances.get(from) ?? 0;
    if (available < amount) throw new Error(`insufficient funds in ${from}: ${available} < ${amount}`);
    this.balances.set(from, available - amount);
    this.balances.set(to, (this.balances.get(to) ?? 0) + amount);
    this.transfers.push({ from, to, amount });
    return `moved ${amount} from ${from} to ${to}; ${from} now holds ${available - amount}`;
  }
}

/**
 * Who is calling: the inbox's signed-in principal on an answer (`request.user`), else the
 * `x-user` header of the chat request. Request-scoped, so the tool that depends on it is too:
 * it is built for the request named in the call's `context.request` (the chat request when
 * asking, the answering request on the replay).
 */
@Injectable({ scope: Scope.REQUEST })
export class CurrentUser {
  readonly name: string;
  constructor(
    @Inject(REQUEST)
    request: { headers?: Record<string, string | string[] | undefined>; user?: { id: string; name?: string } } | undefined,
  ) {
    const header = request?.headers?.['x-user'];
    this.name = request?.user?.name ?? request?.user?.id ?? (typeof header === 'string' && header !== '' ? header : 'anonymous');
  }
}

export class TransferArgs {
  @IsString() @Describe('Account to debit') from!: string;
  @IsString() @Describe('Account to credit') to!: string;
  @IsInt() @Min(1) @Describe('Amount in cents') amount!: number;
}

/** Moving money needs a human's approval: the first call suspends, the replay transfers. */
@Injectable()
@Tool({ name: 'transfer', description: 'Move money between two accounts', args: TransferArgs })
export class TransferTool {
  constructor(
    private readonly ledger: LedgerService,
    private readonly user: CurrentUser,
  ) {}

  run(args: TransferArgs, ctx?: ToolContext) {
    if (ctx?.replay?.request.kind !== 'approval') {
      return pending({
        kind: 'approval',
        prompt: `Transfer ${args.amount} from ${args.from} to ${args.to}?`,
        data: { ...args, requestedBy: this.user.name },
      });
    }
    if (!ctx.answer?.ok) return failure(`transfer declined by ${this.user.name}`);
    return success(`${this.ledger.transfer(args.from, args.to, args.amount)} (approved by ${this.user.name})`);
  }
}
