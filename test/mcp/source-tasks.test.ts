/**
 * docs/mcp.md, "Tasks, as a client": how McpToolSource follows a remote task (SEP-2663) to its
 * end, against the SDK's own v2 server in a child process (test/fixtures/mcp-mrtr/server.ts,
 * whose `job` tool answers tasks that work for a number of polls and then complete, fail, are
 * cancelled or expire). The waits between polls are on a fake clock: the server's
 * `pollIntervalMs`, or the backoff when it suggests none, are read off its timers.
 */
import { Toolkit, type ToolResult } from 'toolnexus-ts';
import { McpToolSource } from 'toolnexus-ts/mcp';
import { startChild, until as childUntil, type Started } from '../fixtures/children';
import { FakeClock, until } from '../fixtures/fake-clock';

interface Counts {
  polls: number;
  cancels: string[];
}

let server: Started;
let url: string;

beforeAll(async () => {
  server = startChild('mcp-mrtr/server.ts', []);
  await childUntil(() => server.stdout().includes('\n'), 30_000, 'the MCP server to listen');
  url = `http://127.0.0.1:${(JSON.parse(server.stdout().split('\n')[0] as string) as { port: number }).port}`;
});
afterAll(async () => {
  server.kill('SIGTERM');
  await server.exited;
});

const counts = async (): Promise<Counts> => (await (await fetch(`${url}/counts`)).json()) as Counts;

async function connected(
  clock: FakeClock,
  callTimeoutMs = 60_000,
  maxPollIntervalMs?: number,
): Promise<{ source: McpToolSource; toolkit: Toolkit }> {
  const source = new McpToolSource({
    config: { mcpServers: { shop: { type: 'http', url: `${url}/mcp` } } },
    tasks: { clock, ...(maxPollIntervalMs !== undefined ? { maxPollIntervalMs } : {}) },
    callTimeoutMs,
  });
  const report = await source.connect();
  expect(report.failed).toEqual([]);
  const toolkit = new Toolkit();
  source.register(toolkit);
  return { source, toolkit };
}

/** Runs the call, stepping the fake clock through each wait it starts; the waits, in order, and the result. */
async function stepped(clock: FakeClock, call: Promise<ToolResult>): Promise<{ waits: number[]; result: ToolResult }> {
  let result: ToolResult | undefined;
  void call.then((value) => (result = value));
  const waits: number[] = [];
  for (;;) {
    await until(() => result !== undefined || clock.timers.length > 0);
    if (result !== undefined) return { waits, result };
    const timer = clock.timers[0]!;
    waits.push(timer.ms);
    clock.advance(timer.ms);
  }
}

describe('a remote task, followed to its end', () => {
  jest.setTimeout(120_000);

  it('polls at the pollIntervalMs the server suggests, and a completed task is the tool result', async () => {
    const clock = new FakeClock();
    const { source, toolkit } = await connected(clock);
    try {
      const before = await counts();
      const { waits, result } = await stepped(clock, toolkit.execute('shop_job', { polls: 3, end: 'completed', interval: 700 }));
      expect(result).toMatchObject({ isError: false, output: expect.stringMatching(/^job job-.* done$/) as unknown });
      expect(waits).toEqual([700, 700, 700]);
      expect((await counts()).polls - before.polls).toBe(3);
    } finally {
      await source.close();
    }
  });

  it('backs off when the server suggests no interval', async () => {
    const clock = new FakeClock();
    const { source, toolkit } = await connected(clock);
    try {
      const { waits, result } = await stepped(clock, toolkit.execute('shop_job', { polls: 4, end: 'completed' }));
      expect(result.isError).toBe(false);
      expect(waits).toEqual([1000, 1500, 2250, 3375]);
    } finally {
      await source.close();
    }
  });

  it('never waits longer than maxPollIntervalMs, whatever the server suggests; a bound that is not positive is refused', async () => {
    const clock = new FakeClock();
    const { source, toolkit } = await connected(clock, 60_000, 500);
    try {
      const { waits, result } = await stepped(clock, toolkit.execute('shop_job', { polls: 2, end: 'completed', interval: 40_000 }));
      expect(result.isError).toBe(false);
      expect(waits).toEqual([500, 500]);
    } finally {
      await source.close();
    }
    expect(() => new McpToolSource({ config: { mcpServers: {} }, tasks: { maxPollIntervalMs: 0 } })).toThrow(
      'tasks.maxPollIntervalMs must be a positive number, got 0',
    );
  });

  it.each([
    ['failed', 'failed: the backend fell over (backend down)'],
    ['cancelled', 'was cancelled: an operator stopped it'],
    ['gone', 'is no longer known to the server (it expired or was removed): Failed to retrieve task: Task has expired'],
  ])('a task that ends %s is an error result saying so', async (end, says) => {
    const clock = new FakeClock();
    const { source, toolkit } = await connected(clock);
    try {
      const { result } = await stepped(clock, toolkit.execute('shop_job', { polls: 1, end, interval: 200 }));
      expect(result.isError).toBe(true);
      expect(result.output).toContain(`MCP server shop, tool job: its task job-`);
      expect(result.output).toContain(says);
    } finally {
      await source.close();
    }
  });

  it("is followed for at most the call's timeout; then the server is asked to cancel it", async () => {
    const clock = new FakeClock();
    const { source, toolkit } = await connected(clock, 5_000);
    try {
      const { waits, result } = await stepped(clock, toolkit.execute('shop_job', { polls: 1, end: 'never', interval: 2_000 }));
      expect(waits).toEqual([2_000, 2_000, 1_000]);
      expect(result.isError).toBe(true);
      expect(result.output).toMatch(/its task (job-\S+) was still working after 5000 ms, .*asked the server to cancel it/);
      const taskId = /its task (job-\S+) /.exec(result.output)?.[1];
      expect((await counts()).cancels).toContain(taskId);
    } finally {
      await source.close();
    }
  });

  it('a call cancelled while it waits tells the server with tasks/cancel', async () => {
    const clock = new FakeClock();
    const { source, toolkit } = await connected(clock);
    const controller = new AbortController();
    try {
      const call = toolkit.execute('shop_job', { polls: 1, end: 'never', interval: 2_000 }, { signal: controller.signal });
      await until(() => clock.timers.length > 0);
      const before = (await counts()).cancels.length;
      controller.abort(new Error('the run was cancelled'));
      const result = await call;
      expect(result).toMatchObject({ isError: true, output: 'shop_job cancelled' });
      expect((await counts()).cancels.length).toBe(before + 1);
    } finally {
      await source.close();
    }
  });
});
