/**
 * Streaming overhead of the UI message stream (`toolnexus-ts/chat`) against the runner's own
 * event stream, on the same run: a model that streams 200 text deltas, calls a tool, then
 * streams 200 more. (a) the run's events, each written as an SSE `data:` line of its JSON
 * (what a host sending our own events does); (b) the same run through `UIPartWriter`, written
 * as SSE one string per event (what `chatHandler` writes). Interleaved, in one process; the figure is b ÷ a.
 *
 * Then the stream log (docs/chat.md, "Reconnecting"): the same run as a whole chat request
 * through `chatResponse` (the session taken and saved, the SSE body read to its end) on a
 * SQLite file and on the memory store, (c) with `streamLog: false` and (d) with the stream
 * log on; the figure is d ÷ c per store.
 *
 *   npm run bench:chat-stream
 */
import 'reflect-metadata';
import { IsString } from 'class-validator';
import { Tool, Toolkit, success } from 'toolnexus-ts';
import type { ChatModel, ModelRequest, ModelStreamEvent } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { UIPartWriter, chatResponse, type ChatOptions, type UIStreamPart } from 'toolnexus-ts/chat';
import { ResumeCoordinator, type SuspensionStore } from 'toolnexus-ts/suspension';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

class Args {
  @IsString() q!: string;
}

@Tool({ name: 'lookup', description: 'Looks up', args: Args })
class Lookup {
  run(args: Args) {
    return success({ found: args.q });
  }
}

const DELTAS = 200;

/** Streams DELTAS words, then a tool call on the first turn; DELTAS words and the answer on the second. */
const model: ChatModel = {
  provider: 'bench',
  complete: () => Promise.reject(new Error('streams only')),
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    const second = request.messages.some((m) => m.role === 'tool');
    let text = '';
    for (let i = 0; i < DELTAS; i++) {
      const delta = `word${i} `;
      text += delta;
      yield { type: 'text', delta };
    }
    const toolCalls = second ? [] : [{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }];
    yield { type: 'response', response: { text, toolCalls, usage: { inputTokens: 1, outputTokens: 1 } } };
  },
};

const ROUNDS = 7;
const RUNS = 200;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

export async function main(): Promise<void> {
  const toolkit = new Toolkit().register(Lookup);
  const runner = new AgentRunner({ model, toolkit });
  let bytes = 0;
  const sse = (parts: readonly unknown[]) => {
    let text = '';
    for (const part of parts) text += `data: ${JSON.stringify(part)}\n\n`;
    return text;
  };
  // Both as a handler writes: one async generator of SSE text, one string per run event.
  async function* ownEvents(): AsyncGenerator<string> {
    for await (const event of runner.stream('go')) yield sse([event]);
  }
  async function* uiParts(): AsyncGenerator<string> {
    const writer = new UIPartWriter({ messageId: 'm' });
    yield sse(writer.start());
    for await (const event of runner.stream('go')) {
      const parts: UIStreamPart[] = writer.next(event);
      if (parts.length > 0) yield sse(parts);
    }
    yield sse(writer.finish());
  }
  const ours = async () => {
    for await (const text of ownEvents()) bytes += text.length;
  };
  const ui = async () => {
    for await (const text of uiParts()) bytes += text.length;
  };
  const time = async (once: () => Promise<void>) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < RUNS; i++) await once();
    return Number(process.hrtime.bigint() - started) / RUNS / 1000; // µs per run
  };
  await time(ours);
  await time(ui);
  const a: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    a.push(await time(ours));
    b.push(await time(ui));
  }
  const ma = median(a);
  const mb = median(b);
  console.log(`runner events as SSE   ${ma.toFixed(0)} µs / run`);
  console.log(`UI message stream SSE  ${mb.toFixed(0)} µs / run`);
  console.log(`UI stream ÷ own events ${(mb / ma).toFixed(2)}× (target ≤ 1.10×; ${bytes} bytes written)`);
}

const LOG_RUNS = 60;

/** (c) and (d): whole chat requests without and with the stream log, interleaved, on `store`; the median of d ÷ c. */
async function streamLogCost(name: string, open: () => SuspensionStore & { close(): Promise<void> }): Promise<void> {
  const toolkit = new Toolkit().register(Lookup);
  let store = open();
  let runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
  let chat = 0;
  const request = async (options: ChatOptions) => {
    const body = JSON.stringify({ id: `c-${chat++}`, messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'go' }] }] });
    const response = await chatResponse(runner, new Request('http://bench.invalid/api/chat', { method: 'POST', body }), {
      ...options,
      principal: { id: 'bench' },
    });
    await response.text();
  };
  const time = async (options: ChatOptions): Promise<[number, number]> => {
    // A memory store is made afresh for each batch: what earlier batches kept would otherwise
    // grow the heap (and its collections) under whichever side runs later.
    if (name === 'memory') {
      await store.close();
      store = open();
      runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
    }
    const started = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    for (let i = 0; i < LOG_RUNS; i++) await request(options);
    const used = process.cpuUsage(cpu);
    return [Number(process.hrtime.bigint() - started) / LOG_RUNS / 1000, (used.user + used.system) / LOG_RUNS];
  };
  await time({ streamLog: false });
  await time({});
  const c: number[] = [];
  const d: number[] = [];
  // The process's CPU time (user + system, the file's writes included) too: on a machine other
  // work loads, the wall clock counts the waits for a core, which this does not.
  const cCpu: number[] = [];
  const dCpu: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const [cWall, cUsed] = await time({ streamLog: false });
    const [dWall, dUsed] = await time({});
    c.push(cWall);
    d.push(dWall);
    cCpu.push(cUsed);
    dCpu.push(dUsed);
  }
  console.log(`${name}: chat run without log  ${median(c).toFixed(0)} µs / run (CPU ${median(cCpu).toFixed(0)} µs)`);
  console.log(`${name}: chat run with log     ${median(d).toFixed(0)} µs / run (CPU ${median(dCpu).toFixed(0)} µs)`);
  console.log(
    `${name}: with ÷ without        ${(median(d) / median(c)).toFixed(2)}× (target ≤ 1.10×; CPU time ${(median(dCpu) / median(cCpu)).toFixed(2)}×)`,
  );
  await store.close();
}

/**
 * The SQLite log's own writes alone, as a chat response makes them for this run: `openStream`,
 * then one `appendStream` of the run's UI parts (the response's JSON texts), 300 runs a round,
 * seven rounds; the median of µs per run (and of the process's CPU time), and each round's.
 */
async function logWrites(dir: string): Promise<void> {
  const toolkit = new Toolkit().register(Lookup);
  const runner = new AgentRunner({ model, toolkit });
  const writer = new UIPartWriter({ messageId: 'm' });
  const parts = writer.start().map((part) => JSON.stringify(part));
  for await (const event of runner.stream('go')) for (const part of writer.next(event)) parts.push(JSON.stringify(part));
  for (const part of writer.finish()) parts.push(JSON.stringify(part));
  const store = new SqliteStore(join(dir, 'writes.db'));
  let run = 0;
  const rounds: number[] = [];
  const cpu: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const started = process.hrtime.bigint();
    const before = process.cpuUsage();
    for (let i = 0; i < 300; i++) {
      const runId = `w-${run++}`;
      const at = await store.openStream(runId, 'bench:s');
      await store.appendStream(runId, at, parts, at + parts.length, true);
    }
    const used = process.cpuUsage(before);
    // The first round warms up.
    if (round > 0) {
      rounds.push(Number(process.hrtime.bigint() - started) / 300 / 1000);
      cpu.push((used.user + used.system) / 300);
    }
  }
  await store.close();
  const bytes = parts.reduce((sum, part) => sum + Buffer.byteLength(part) + 1, 0);
  console.log(
    `SQLite: the log's writes alone (${parts.length} parts, ${bytes} B)  ${median(rounds).toFixed(0)} µs / run, CPU ${median(cpu).toFixed(0)} µs (rounds: ${rounds.map((us) => us.toFixed(0)).join(' ')})`,
  );
}

export async function logs(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-chat-log-'));
  try {
    await logWrites(dir);
    await streamLogCost('SQLite', () => new SqliteStore(join(dir, 'chat.db')));
    await streamLogCost('memory', () => new MemoryStore());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  (process.argv.includes('--log-only') ? logs() : main().then(logs)).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
