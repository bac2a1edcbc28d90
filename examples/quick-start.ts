import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { Describe, Tool, Toolkit, failure, pending, success, type ToolContext } from 'toolnexus-ts';

class TransferArgs {
  @IsString() @Describe('Account to debit') from!: string;
  @IsString() @Describe('Account to credit') to!: string;
  @IsInt() @Min(1) @Describe('Amount in cents') amount!: number;
}

@Tool({ description: 'Move money between two accounts', args: TransferArgs })
class TransferTool {
  async run(args: TransferArgs, ctx?: ToolContext) {
    if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Transfer ${args.amount} from ${args.from}?` });
    if (!ctx.answer.ok) return failure('transfer declined');
    return success({ moved: args.amount });
  }
}

async function main() {
  const toolkit = new Toolkit().register(TransferTool);
  console.log(JSON.stringify(toolkit.toOpenAI()));                  // the schema, from the decorators
  console.log(await toolkit.execute('transfer', { from: 'a', to: 'b', amount: 0 }));
  // → { output: 'invalid arguments for transfer: amount: amount must not be less than 1', isError: true }
  const asked = await toolkit.execute('transfer', { from: 'a', to: 'b', amount: 5 });
  console.log(asked.output);                                        // → Transfer 5 from a?
}
main();
