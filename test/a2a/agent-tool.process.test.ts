/**
 * docs/a2a.md, "A remote A2A agent as a tool": `@a2a-js/sdk`'s own server asks for input; our
 * tool, called through a Toolkit and a ResumeCoordinator on a SQLite file, suspends; the answer
 * is given in another process, whose replay sends it on the same remote task exactly once; the
 * agent's artifact is the result. Every process here is a real one: the SDK requires `jose`, an
 * ES module, which only a real node can require (not jest's module system).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PendingRequest, ToolResult } from 'toolnexus-ts';
import { outputOf, startChild, until, type Started } from '../fixtures/children';

interface Printed {
  result: ToolResult;
  request?: PendingRequest;
  pid: number;
  name?: string;
}

interface Seen {
  taskId: string;
  contextId: string;
  messageId: string;
  text: string;
  data?: unknown;
  answer: boolean;
  authorization: string;
}

const TOKEN = 'sekret-a2a-token-4711';
let dir: string;
let agent: Started;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-a2a-tool-'));
  agent = startChild('a2a/remote-agent.ts', []);
  await until(() => agent.stdout().includes('\n'), 30_000, 'the A2A agent to listen');
  url = `http://127.0.0.1:${(JSON.parse(agent.stdout().split('\n')[0] as string) as { port: number }).port}`;
});
afterAll(async () => {
  agent.kill('SIGTERM');
  await agent.exited;
  rmSync(dir, { recursive: true, force: true });
});

const child = (args: string[]) => outputOf<Printed>(startChild('a2a/agent-tool-child.ts', args, { A2A_TOKEN: TOKEN }), args[0] as string);
const recorded = async (): Promise<Seen[]> => (await (await fetch(`${url}/recorded`)).json()) as Seen[];
const answer = (request: PendingRequest, data: Record<string, unknown>) => JSON.stringify({ id: request.id, ok: true, data });

describe('a remote A2A agent as a tool, answered from another process', () => {
  it('suspends on input-required; the answer goes on the same task once; the artifact is the result', async () => {
    const db = join(dir, 'book.db');
    const asked = await child(['ask', db, url, 'book a room for four']);
    expect(asked.name).toBe('Booking_Agent');
    const request = asked.request!;
    expect(request).toMatchObject({
      kind: 'input',
      prompt: 'Which date?',
      data: {
        a2a: { agent: 'Booking Agent' },
        schema: { type: 'object', properties: { text: { type: 'string', description: 'a day of the week' } } },
      },
    });
    const { taskId, contextId } = (request.data as { a2a: { taskId: string; contextId: string } }).a2a;
    let seen = await recorded();
    expect(seen.filter((item) => item.taskId === taskId)).toEqual([
      expect.objectContaining({ contextId, text: 'book a room for four', data: { floor: 3 }, answer: false }),
    ]);

    const answered = await child(['answer', db, url, answer(request, { text: 'Tuesday' })]);
    expect(answered.pid).not.toBe(asked.pid);
    expect(answered.result).toEqual({
      output: 'booked for Tuesday\n{"room":12}',
      isError: false,
      metadata: expect.objectContaining({ agent: 'Booking Agent', taskId, state: 'completed' }) as unknown,
    });
    // The same answer again, from a third process: the stored outcome; the agent hears nothing more.
    const again = await child(['answer', db, url, answer(request, { text: 'Tuesday' })]);
    expect(again.result).toEqual(answered.result);
    seen = await recorded();
    expect(seen.filter((item) => item.taskId === taskId && item.answer)).toEqual([
      { taskId, contextId, messageId: request.id, text: 'Tuesday', answer: true, authorization: `Bearer ${TOKEN}` },
    ]);
  });

  it('is answered from the CLI as well: `pending approve --data` replays the call, which answers the task', async () => {
    const db = join(dir, 'cli.db');
    const request = (await child(['ask', db, url, 'book a room by the CLI'])).request!;
    const tools = join(__dirname, '..', 'fixtures', 'a2a', 'agent-cli-tools.ts');
    const cliArgs = ['pending', 'approve', request.id, '--data', JSON.stringify({ text: 'Wednesday' }), '--json', '--tools', tools];
    const exit = await startChild(join('..', '..', 'src', 'cli', 'main.ts'), [...cliArgs, '--store', `sqlite:${db}`], {
      A2A_AGENT_URL: url,
      A2A_TOKEN: TOKEN,
    }).exited;
    expect([exit.code, exit.stderr]).toEqual([0, '']);
    expect(exit.stdout).toContain('booked for Wednesday');
    const { taskId } = (request.data as { a2a: { taskId: string } }).a2a;
    expect((await recorded()).filter((item) => item.taskId === taskId && item.answer).map((item) => item.text)).toEqual(['Wednesday']);
  });

  it('takes the card itself, named and described as the host says', async () => {
    const card = (await (await fetch(`${url}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    const options = { card, name: 'rooms', description: 'Books rooms' };
    const { result, name } = await child(['ask', join(dir, 'card.db'), url, 'plain request', JSON.stringify(options)]);
    expect(name).toBe('rooms');
    expect(result).toMatchObject({ output: 'done: plain request', isError: false });
  });

  it('asks again on the same task when the agent asks again, and finishes after the second answer', async () => {
    const db = join(dir, 'book2.db');
    const asked = await child(['ask', db, url, 'book2 a room']);
    const first = asked.request!;
    const second = (await child(['answer', db, url, answer(first, { text: 'Friday' })])).request!;
    expect(second).toMatchObject({
      kind: 'input',
      prompt: 'Which time?',
      data: { a2a: (first.data as { a2a: unknown }).a2a, followUp: true },
    });
    const done = await child(['answer', db, url, answer(second, { text: 'noon' })]);
    expect(done.result.output).toBe('booked for Friday at noon\n{"room":12}');
    const { taskId } = (first.data as { a2a: { taskId: string } }).a2a;
    expect((await recorded()).filter((item) => item.taskId === taskId).map((item) => item.text)).toEqual([
      'book2 a room',
      'Friday',
      'noon',
    ]);
  });

  it.each([
    ['fail now', /^A2A task \S+ failed: no rooms left \(you sent \*\*\*\)$/],
    ['reject this', /^A2A task \S+ rejected: not my job$/],
    ['auth me', /^A2A task \S+ auth-required: sign in first \(this tool does not sign in to A2A agents/],
  ])('a remote task that ends without success (%s) is an error result that says so', async (task, output) => {
    const { result } = await child(['ask', join(dir, 'fail.db'), url, task]);
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(output);
  });

  it('a response past maxResponseBytes is refused, not read', async () => {
    const { result } = await child(['ask', join(dir, 'big.db'), url, 'big please', JSON.stringify({ maxResponseBytes: 100_000 })]);
    expect(result).toMatchObject({ isError: true, output: expect.stringContaining('response is over 100000 bytes') as unknown });
    const ok = await child(['ask', join(dir, 'big.db'), url, 'big please', JSON.stringify({ maxResponseBytes: 4_000_000 })]);
    expect(ok.result.output).toHaveLength(2_000_000);
  });

  it('a task that never ends is given up after timeoutMs, saying in which state', async () => {
    const { result } = await child(['ask', join(dir, 'slow.db'), url, 'slow work', JSON.stringify({ timeoutMs: 1_500, pollEveryMs: 100 })]);
    expect(result).toMatchObject({
      isError: true,
      output: expect.stringMatching(/^A2A task( \S+)? timed out after 1500ms \(state=(working|submitted)\)$/) as unknown,
    });
  });

  it('a call whose caller gives up (its signal aborts) while the agent works ends as canceled, at once', async () => {
    const { result } = await child(['ask', join(dir, 'abort.db'), url, 'slow work', JSON.stringify({ abortAfterMs: 500 })]);
    // The Toolkit's own word for a cancelled call (docs/tools.md).
    expect(result).toEqual({ isError: true, output: 'Booking_Agent cancelled' });
  });

  it('at most maxParts parts become the result; the rest are counted', async () => {
    const { result } = await child(['ask', join(dir, 'many.db'), url, 'many parts', JSON.stringify({ maxParts: 100 })]);
    const lines = result.output.split('\n');
    expect(lines).toHaveLength(101);
    expect(lines[99]).toBe('part 99');
    expect(lines[100]).toBe('(50 more parts left out)');
  });

  it('a card that cannot be read, or a header whose variable is not set, throws A2AAgentError naming no value', async () => {
    const make = (target: string, options: object) =>
      outputOf<{ made: boolean; code?: string; message?: string }>(
        startChild('a2a/agent-tool-child.ts', ['make', '-', target, JSON.stringify(options)], { A2A_TOKEN: TOKEN }),
        'make',
      );
    const unset = await make(url, { headers: { authorization: 'Bearer ${A2A_UNSET_VARIABLE}' } });
    expect(unset).toMatchObject({ made: false, code: 'TOOLNEXUS_A2A_AGENT' });
    expect(unset.message).toContain('${A2A_UNSET_VARIABLE}, which is not set');
    const missing = await make(`${url}/no-such-card.json`, { headers: { authorization: 'Bearer ${A2A_TOKEN}' } });
    expect(missing).toMatchObject({
      made: false,
      code: 'TOOLNEXUS_A2A_AGENT',
      message: expect.stringContaining('could not be read') as unknown,
    });
    expect(JSON.stringify(missing)).not.toContain(TOKEN);
    expect(await make(url, { headers: { authorization: 'Bearer ${A2A_TOKEN}' } })).toEqual({ made: true });
  });

  it('sends the headers to the origin the card came from only, unless the host lists another', async () => {
    const db = join(dir, 'origin.db');
    const refused = await child(['ask', db, `${url}/elsewhere/.well-known/agent-card.json`, 'echo it']);
    expect(refused.result).toMatchObject({
      isError: true,
      output: expect.stringMatching(
        /^A2A agent Booking Agent: the agent's endpoint is at http:\/\/127\.0\.0\.1:\d+, not at the origin its card came from/,
      ) as unknown,
    });
    // Given as the base it is mounted at, the card is found under it first (not the root's): the same card, the same refusal.
    const mounted = await child(['ask', join(dir, 'mounted.db'), `${url}/elsewhere`, 'echo it']);
    expect(mounted.result.output).toBe(refused.result.output);
    const endpoint = /at (http:\/\/127\.0\.0\.1:\d+)/.exec(refused.result.output)![1] as string;
    const allowed = await child([
      'ask',
      db,
      `${url}/elsewhere/.well-known/agent-card.json`,
      'echo it',
      JSON.stringify({ headerOrigins: [endpoint] }),
    ]);
    expect(allowed.result).toMatchObject({ isError: false, output: 'you sent ***' });
  });

  it('header values never reach a result, an error, a request or a stored row', async () => {
    const db = join(dir, 'secret.db');
    const echoed = await child(['ask', db, url, 'echo it']);
    expect(echoed.result.output).toBe('you sent ***');
    const asked = await child(['ask', db, url, 'ask-echo it']);
    expect(asked.request?.prompt).toBe('Confirm the key ***?');
    const failed = await child(['ask', db, url, 'fail now']);
    expect(failed.result.output).toContain('(you sent ***)');
    const printed = JSON.stringify([echoed, asked, failed]);
    expect(printed).not.toContain(TOKEN);
    for (const file of [db, `${db}-wal`]) {
      let bytes = '';
      try {
        bytes = readFileSync(file).toString('latin1');
      } catch {
        continue;
      }
      expect(bytes).not.toContain(TOKEN);
    }
    // The agent did get the token: it was sent, only never shown.
    expect((await recorded()).find((item) => item.text === 'echo it')?.authorization).toBe(`Bearer ${TOKEN}`);
  });
});
