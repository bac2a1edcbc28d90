/**
 * Cost of validated dispatch: `toolkit.execute` for a 4-field DTO tool against
 * (a) raw class-transformer `plainToInstance` + class-validator `validate` on the same DTO,
 * (b) a direct `run` call. All three run interleaved in one process; figures are ratios.
 *
 *   npm run bench:dispatch
 */
import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { IsInt, IsOptional, IsString, Min, validate } from 'class-validator';
import { Describe, Tool, Toolkit, success } from 'toolnexus-ts';

class TransferArgs {
  @IsString() @Describe('Account to debit') from!: string;
  @IsString() @Describe('Account to credit') to!: string;
  @IsInt() @Min(1) @Describe('Amount in cents') amount!: number;
  @IsOptional() @IsString() memo?: string;
}

@Tool({ name: 'transfer', description: 'Move money', args: TransferArgs })
class TransferTool {
  run(args: TransferArgs) {
    return success(`moved ${args.amount}`);
  }
}

const ARGS = { from: 'acc-1', to: 'acc-2', amount: 1250, memo: 'rent' };
const ROUNDS = 7;
const CALLS = 20_000;

type Variant = { name: string; once: () => Promise<unknown> };

async function timeIt(variant: Variant): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) await variant.once();
  return Number(process.hrtime.bigint() - started) / CALLS; // ns per call
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const middle = s[Math.floor(s.length / 2)];
  if (middle === undefined) throw new Error('median of no samples');
  return middle;
}

export async function main(): Promise<void> {
  const toolkit = new Toolkit().register(TransferTool);
  const tool = new TransferTool();
  const variants: Variant[] = [
    { name: 'toolkit.execute (validated)', once: () => toolkit.execute('transfer', { ...ARGS }) },
    {
      name: 'raw plainToInstance + validate',
      once: async () => {
        const instance = plainToInstance(TransferArgs, { ...ARGS });
        const errors = await validate(instance, { whitelist: true, forbidUnknownValues: true });
        if (errors.length) throw new Error('invalid');
        return tool.run(instance);
      },
    },
    { name: 'direct run', once: async () => tool.run(Object.assign(new TransferArgs(), ARGS)) },
  ];
  for (const v of variants) await timeIt(v); // warm-up: JIT and the per-class caches

  const samples = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order so no variant always runs on a hotter or colder heap.
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(round + k) % variants.length]!;
      samples.get(v.name)!.push(await timeIt(v));
    }
  }
  const ns = new Map([...samples].map(([name, xs]) => [name, median(xs)]));
  const raw = ns.get('raw plainToInstance + validate')!;
  const direct = ns.get('direct run')!;
  console.log(`dispatch: ${ROUNDS} rounds x ${CALLS} calls, median per call (node ${process.version})`);
  console.log('variant                          µs/call   vs raw   vs direct');
  for (const [name, value] of ns) {
    console.log(
      `${name.padEnd(32)} ${(value / 1000).toFixed(2).padStart(7)}   ${(value / raw).toFixed(2).padStart(5)}×   ${(value / direct).toFixed(1).padStart(6)}×`,
    );
  }
  const ratio = ns.get('toolkit.execute (validated)')! / raw;
  console.log(`validated dispatch / raw class-validator = ${ratio.toFixed(2)}× (target ≤ 1.20×) ${ratio <= 1.2 ? 'OK' : 'OVER TARGET'}`);
}

if (require.main === module) void main();
