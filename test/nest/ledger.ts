/** The service, DTO and approval tool that the Nest tests share. */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { IsInt, IsString, Min } from 'class-validator';
import { Describe, Tool, failure, pending, success, type ToolContext } from 'toolnexus-ts';

@Injectable()
export class LedgerService {
  readonly moves: string[] = [];
  move(from: string, to: string, amount: number): string {
    this.moves.push(`${from}->${to}:${amount}`);
    return `moved ${amount} from ${from} to ${to}`;
  }
}

export class TransferArgs {
  @IsString() @Describe('Account to debit') from!: string;
  @IsString() @Describe('Account to credit') to!: string;
  @IsInt() @Min(1) @Describe('Amount in cents') amount!: number;
}

/** A tool provider that needs another provider and asks for approval before it moves money. */
@Injectable()
@Tool({ name: 'transfer', description: 'Move money between two accounts', args: TransferArgs })
export class TransferTool {
  constructor(private readonly ledger: LedgerService) {}
  run(args: TransferArgs, ctx?: ToolContext) {
    if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Transfer ${args.amount} from ${args.from} to ${args.to}?` });
    if (!ctx.answer.ok) return failure('transfer declined');
    return success(this.ledger.move(args.from, args.to, args.amount));
  }
}
