import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { Describe, Tool, Toolkit, success } from 'toolnexus-ts';

class TransferArgs {
  @IsString() @Describe('Account to debit') from!: string;
  @IsString() @Describe('Account to credit') to!: string;
  @IsInt() @Min(1) @Describe('Amount in cents') amount!: number;
}

// A declared approval: the Toolkit asks before `run`, and `run` is called only once it is given
// (a decline never reaches it). The safe way to ask; see docs/suspension.md.
@Tool({
  description: 'Move money between two accounts',
  args: TransferArgs,
  approval: { prompt: (args: TransferArgs) => `Transfer ${args.amount} from ${args.from}?` },
})
class TransferTool {
  async run(args: TransferArgs) {
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
