import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { Describe, Tool, Toolkit, defineTool, pending, failure, success, type ToolContext } from 'toolnexus-ts';

export class WeatherArgs {
  @IsString() @Describe('City name') city!: string;
}

/** Answers after a delay given per city, so parallel calls finish out of call order. */
@Tool({ name: 'weather', description: 'Current weather for a city', args: WeatherArgs })
export class WeatherTool {
  static readonly delays: Record<string, number> = { Oslo: 60, Lima: 5, Rome: 30 };
  async run(args: WeatherArgs): Promise<string> {
    await new Promise((resolve) => setTimeout(resolve, WeatherTool.delays[args.city] ?? 0));
    return `${args.city}: sunny`;
  }
}

export class PayArgs {
  @IsString() invoice!: string;
  @IsInt() @Min(1) cents!: number;
}

/** Needs approval: suspends first, pays on the replay that carries the answer. */
@Tool({ name: 'pay', description: 'Pay an invoice', args: PayArgs })
export class PayTool {
  readonly paid: string[] = [];
  run(args: PayArgs, ctx?: ToolContext) {
    if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Pay ${args.cents} cents for invoice ${args.invoice}?` });
    if (!ctx.answer.ok) return failure('payment declined');
    this.paid.push(args.invoice);
    return success({ paid: args.invoice, cents: args.cents });
  }
}

export function weatherToolkit(): Toolkit {
  return new Toolkit().register(
    WeatherTool,
    defineTool({ name: 'fail', description: 'Always fails', run: () => failure('it broke') }),
  );
}
