/**
 * The two halves of a call (docs/design.md, "the path of a call"): `prepare` parses once and
 * says so in the value it returns; `run` runs that value without parsing it again; `execute`
 * is the two, with the same results and hooks.
 */
import 'reflect-metadata';
import { IsDate, IsString } from 'class-validator';
import { Type } from 'class-transformer';
import { Describe, Toolkit, defineTool, type ToolMetricEvent } from 'toolnexus-ts';
import { PreparedCall } from '../../src/toolkit/prepared';

class MeetArgs {
  @IsString() @Describe('Who') who!: string;
  @Type(() => Date) @IsDate() @Describe('When') at!: Date;
}

const seen: unknown[] = [];
const meet = defineTool({
  name: 'meet',
  description: 'Books a meeting',
  args: MeetArgs,
  run: (args) => {
    seen.push(args);
    return `${args.who} at ${args.at.toISOString()}`;
  },
});

beforeEach(() => {
  seen.length = 0;
});

describe('Toolkit.prepare and run', () => {
  it('prepare validates once; run takes the DTO as it is, even one a second parse would refuse (a Date)', async () => {
    const toolkit = new Toolkit().register(meet);
    const call = await toolkit.prepare('meet', '{"who":"ana","at":"2030-01-02T03:04:05.000Z"}');
    expect(call).toBeInstanceOf(PreparedCall);
    if (!call.ok) throw new Error('expected a prepared call');
    expect(call.args).toBeInstanceOf(MeetArgs);
    expect(call.stored).toEqual({ ok: true, json: '{"who":"ana","at":"2030-01-02T03:04:05.000Z"}' });
    expect(await toolkit.run(call)).toEqual({ output: 'ana at 2030-01-02T03:04:05.000Z', isError: false });
    expect(seen[0]).toBe(call.args);
  });

  it("refuses with execute's words, tells no hook until the refused call is run, then tells them once", async () => {
    const metrics: ToolMetricEvent[] = [];
    const toolkit = new Toolkit({ hooks: { onMetric: (event) => metrics.push(event) } }).register(meet);
    const unknown = await toolkit.prepare('nope', {});
    const invalid = await toolkit.prepare('meet', '{"who": 1');
    expect(unknown).toMatchObject({ ok: false, problem: 'unknown tool', result: { output: 'unknown tool: nope', isError: true } });
    expect(invalid.ok).toBe(false);
    expect(metrics).toEqual([]);
    expect(await toolkit.run(invalid)).toEqual(await toolkit.execute('meet', '{"who": 1'));
    expect(metrics.map((m) => [m.tool, m.isError])).toEqual([
      ['meet', true],
      ['meet', true],
    ]);
  });

  it('a call prepared by another toolkit, or before its tool was unregistered, is an unknown tool', async () => {
    const one = new Toolkit().register(meet);
    const other = new Toolkit().register(meet);
    const call = await one.prepare('meet', { who: 'ana', at: '2030-01-02T03:04:05.000Z' });
    expect(await other.run(call)).toEqual({ output: 'unknown tool: meet', isError: true });
    one.unregister('meet');
    expect(await one.run(call)).toEqual({ output: 'unknown tool: meet', isError: true });
    expect(seen).toEqual([]);
  });

  it('the stored form is taken when first read, before run may change the arguments', async () => {
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'grow',
        description: 'Changes its arguments',
        inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
        run: (args) => {
          (args as { n: number }).n++;
          return 'ok';
        },
      }),
    );
    const call = await toolkit.prepare('grow', { n: 1 });
    if (!call.ok) throw new Error('expected a prepared call');
    const before = call.stored;
    await toolkit.run(call);
    expect(before).toEqual({ ok: true, json: '{"n":1}' });
    expect(call.stored).toBe(before);
  });
});
