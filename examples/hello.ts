import 'reflect-metadata';
import { IsString } from 'class-validator';
import { Describe, Tool, Toolkit } from 'toolnexus-ts';

class GreetArgs {
  @IsString() @Describe('Who to greet') name!: string;
}

@Tool({ description: 'Greets someone', args: GreetArgs })
class GreetTool {
  run(args: GreetArgs) {
    return `hello, ${args.name}`;
  }
}

export async function main(): Promise<void> {
  const toolkit = new Toolkit().register(GreetTool);
  console.log(await toolkit.execute('greet', { name: 'Ada' }));
}

if (require.main === module) void main();
