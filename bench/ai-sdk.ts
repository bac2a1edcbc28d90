/**
 * toolnexus-ts/ai-sdk against the plain AI SDK, per run of a two-turn loop (the model asks
 * for `add`, then answers) against one mock OpenAI-compatible server on 127.0.0.1 in this
 * process (docs/performance.md, "AI SDK interop"):
 *
 *   A. generateText with aiSdkTools (a class-validator DTO tool)   vs  B. generateText with an AI SDK tool({ inputSchema: zod })
 *   C. AgentRunner over AiSdkModel(@ai-sdk/openai chat)           vs  D. AgentRunner over OpenAIChatModel
 *
 * then one tool call outside the loop, as the AI SDK makes it (validate the parsed input,
 * execute, convert the output), for A's tool and B's: what aiSdkTools adds per call.
 *
 * Variants run interleaved, ROUNDS rounds of RUNS runs each, order rotated; medians shown.
 *
 *   npm run build:examples && node dist-examples/bench/ai-sdk.js
 */
import 'reflect-metadata';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAI } from '@ai-sdk/openai';
import { asSchema, generateText, stepCountIs, tool, zodSchema, type Tool as AiTool } from 'ai';
import { IsInt } from 'class-validator';
import { z } from 'zod';
import { Tool, Toolkit } from 'toolnexus-ts';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { AiSdkModel, aiSdkTools } from 'toolnexus-ts/ai-sdk';

class AddArgs {
  @IsInt() a!: number;
  @IsInt() b!: number;
}

@Tool({ name: 'add', description: 'Adds two integers', args: AddArgs })
class AddTool {
  run(args: AddArgs): string {
    return String(args.a + args.b);
  }
}

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const RUNS = Number(process.env.RUNS ?? 100);

async function main(): Promise<void> {
  let calls = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { messages: Array<{ role: string }> };
      const answered = body.messages.some((m) => m.role === 'tool');
      const message = answered
        ? { role: 'assistant', content: 'the sum is 5' }
        : {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: `call_${++calls}`, type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }],
          };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'c',
          object: 'chat.completion',
          created: 0,
          model: 'm',
          choices: [{ index: 0, message, finish_reason: answered ? 'stop' : 'tool_calls' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const model = createOpenAI({ baseURL: url, apiKey: 'bench' }).chat('m');
  const toolkit = new Toolkit().register(AddTool);
  const ours = aiSdkTools(toolkit);
  const theirs = {
    add: tool({
      description: 'Adds two integers',
      inputSchema: zodSchema(z.object({ a: z.number().int(), b: z.number().int() })),
      execute: ({ a, b }) => String(a + b),
    }),
  };
  const overAiSdk = new AgentRunner({ model: new AiSdkModel(model), toolkit });
  const overOpenAI = new AgentRunner({ model: new OpenAIChatModel({ baseUrl: url, apiKey: 'bench', model: 'm' }), toolkit });
  const variants: Record<string, () => Promise<unknown>> = {
    'A generateText + aiSdkTools': () => generateText({ model, tools: ours, prompt: 'add', stopWhen: stepCountIs(3) }),
    'B generateText + zod tool': () => generateText({ model, tools: theirs, prompt: 'add', stopWhen: stepCountIs(3) }),
    'C AgentRunner + AiSdkModel': () => overAiSdk.run('add'),
    'D AgentRunner + OpenAIChatModel': () => overOpenAI.run('add'),
  };
  const names = Object.keys(variants);
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  // CPU per run too: wall time on a shared machine moves with the others' load, CPU much less.
  const cpu: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const name of names) for (let i = 0; i < 20; i++) await variants[name]?.(); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length] as string);
    for (const name of order) {
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      for (let i = 0; i < RUNS; i++) await variants[name]?.();
      const used = process.cpuUsage(cpuBefore);
      times[name]?.push(((performance.now() - started) * 1000) / RUNS);
      cpu[name]?.push((used.user + used.system) / RUNS);
    }
  }
  server.close();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const m = Object.fromEntries(names.map((n) => [n, median(times[n] ?? [])]));
  const c = Object.fromEntries(names.map((n) => [n, median(cpu[n] ?? [])]));
  console.log(`| variant | µs / run (median of ${ROUNDS} × ${RUNS}) | CPU µs / run (client and mock, one process) |\n|---|---:|---:|`);
  for (const n of names) console.log(`| ${n} | ${Math.round(m[n] ?? 0)} | ${Math.round(c[n] ?? 0)} |`);
  const ratio = (a: string, b: string) => ((m[a] ?? 0) / (m[b] ?? 1)).toFixed(2);
  // Each round's ratio, then the median: the drift of other load between rounds cancels.
  const paired = (a: string, b: string, of: Record<string, number[]>) =>
    median((of[a] ?? []).map((x, i) => x / (of[b]?.[i] ?? Number.NaN))).toFixed(2);
  const [a, b, cc, d] = names as [string, string, string, string];
  console.log(
    `\nA / B (our tools vs zod tools in the AI SDK loop): ${ratio(a, b)}x; paired by round ${paired(a, b, times)}x, CPU ${paired(a, b, cpu)}x`,
  );
  console.log(
    `C / D (AgentRunner over AiSdkModel vs over OpenAIChatModel): ${ratio(cc, d)}x; paired by round ${paired(cc, d, times)}x, CPU ${paired(cc, d, cpu)}x`,
  );
  await perToolCall(ours.add as AiTool, theirs.add);
}

/** CPU per tool call, outside the loop: the AI SDK's validate, execute and toModelOutput of each tool. */
async function perToolCall(oursTool: AiTool, theirsTool: AiTool): Promise<void> {
  let id = 0;
  const call = async (t: AiTool): Promise<unknown> => {
    const input: unknown = JSON.parse('{"a":2,"b":3}');
    const checked = await asSchema(t.inputSchema).validate?.(input);
    if (!checked?.success) throw new Error('the bench input did not validate');
    const options = { toolCallId: `call_${++id}`, messages: [] } as unknown as Parameters<NonNullable<AiTool['execute']>>[1];
    const value: unknown = checked.value;
    const output: unknown = await t.execute?.(value, options);
    return t.toModelOutput ? t.toModelOutput({ toolCallId: options.toolCallId, input: value, output }) : output;
  };
  const N = 20_000;
  const cpu: Record<'ours' | 'theirs', number[]> = { ours: [], theirs: [] };
  for (let i = 0; i < 5_000; i++) await call(oursTool).then(() => call(theirsTool));
  for (let round = 0; round < 9; round++) {
    const order: Array<['ours' | 'theirs', AiTool]> = [
      ['ours', oursTool],
      ['theirs', theirsTool],
    ];
    for (const [key, t] of round % 2 === 0 ? order : order.reverse()) {
      const before = process.cpuUsage();
      for (let i = 0; i < N; i++) await call(t);
      const used = process.cpuUsage(before);
      cpu[key].push((used.user + used.system) / N);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  console.log(
    `\nOne tool call outside the loop (validate + execute + output, 9 rounds × ${N}, CPU): aiSdkTools ${median(cpu.ours).toFixed(2)} µs, zod tool() ${median(cpu.theirs).toFixed(2)} µs`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
