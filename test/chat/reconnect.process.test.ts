/**
 * Reconnecting to a chat's run (issue 49), with the AI SDK's own client (`AbstractChat` over
 * `DefaultChatTransport`, what `useChat({ resume: true })` is), on PostgreSQL and on a SQLite
 * file shared by two processes: the test's server drives the run (POST), and a server process
 * of its own (test/fixtures/chat/stream-child.ts) on the same store serves the reconnect (GET
 * `<path>/<chat id>/stream`).
 *
 * The page's connection drops (a network error) at about 30 % of a run that streams text and a
 * tool's progress; the model waits at a gate, so the drop and the reconnect happen at known
 * points, whatever the machine's load. The page reconnects with its position: it gets exactly
 * the parts after it, then the rest live; what both responses brought is the run's stream log,
 * each part once, and the page's message is that of an uninterrupted run; a reloaded page (no
 * position) follows the same run from its first part to the same message. The same after the
 * run ended, and when the run asked an approval while the page was away: the reconnected page
 * shows it, answers it, and the run finishes once. Nobody reaches another principal's stream.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import type { StreamLogStore } from 'toolnexus-ts/agents';
import { CHAT_STREAM_HEADER, chatHandler } from 'toolnexus-ts/chat';
import { startChild, until, type Started } from '../fixtures/children';
import { loadAiClient, pageChat } from '../fixtures/chat/ai-client';
import { readLedger } from '../fixtures/chat/agent';
import { AFTER_TOOL, BEFORE_GATE, buildStreamAgent, gatedModel } from '../fixtures/chat/stream-agent';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

const ai = loadAiClient();

const STORES: Array<[string, (dir: string) => Promise<{ spec: string; drop: () => Promise<void> }>]> = [
  [
    'PostgreSQL',
    async () => {
      const url = await postgresUrl();
      const schema = uniqueSchema('reconnect');
      return { spec: `pg:${url}#${schema}`, drop: () => dropSchema(url, schema) };
    },
  ],
  ['a SQLite file', async (dir) => ({ spec: `sqlite:${join(dir, 'chat.db')}`, drop: async () => undefined })],
];

/** What one response brought the page: its position header, and the parts (JSON texts) it passed on. */
interface Tapped {
  url: string;
  status: number;
  position: string | undefined;
  parts: string[];
}

/** Where a page's connection drops: after the part for which `when` holds, once the page has `shown` it. */
interface Drop {
  when: (parts: readonly string[]) => boolean;
  shown: () => Promise<void>;
}

/**
 * The page's fetch: the browser's, each response's parts recorded as the page reads them. With
 * `drop`, the connection of the first response for which it holds is torn down right after that
 * part, and the page reads a network error (`TypeError`), as when a phone loses its network.
 * The error waits until the page has shown that part: a stream's error discards what its
 * readers had not taken yet, so the page's position is what it shows.
 */
function tapFetch(taps: Tapped[], drop?: Drop): typeof fetch {
  let dropped = false;
  return async (input, init) => {
    const response = await fetch(input, init);
    const tap: Tapped = {
      url: typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      status: response.status,
      position: response.headers.get(CHAT_STREAM_HEADER) ?? undefined,
      parts: [],
    };
    taps.push(tap);
    if (!response.body || response.status !== 200) return response;
    const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let buffered = '';
    let cut = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        // The part before the cut was handed over; now the network fails.
        if (cut) {
          await drop?.shown();
          return controller.error(new TypeError('network error'));
        }
        const { done, value } = await reader.read();
        if (done) return controller.close();
        buffered += decoder.decode(value, { stream: true });
        const events = buffered.split('\n\n');
        buffered = events.pop() ?? '';
        let out = '';
        for (const event of events) {
          out += `${event}\n\n`;
          if (event.startsWith('data: ') && event !== 'data: [DONE]') tap.parts.push(event.slice('data: '.length));
          if (!dropped && drop?.when(tap.parts)) {
            dropped = cut = true;
            await reader.cancel();
            break;
          }
        }
        if (out !== '') controller.enqueue(encoder.encode(out));
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

const deltas = (parts: readonly string[]) => parts.filter((part) => part.includes('"type":"text-delta"')).length;
/** About 30 % of the run: 13 of the first turn's 16 text pieces (16 parts of some 52). */
const DROP_AT = (parts: readonly string[]) => deltas(parts) === 13;
const SHOWN_AT_DROP = BEFORE_GATE.slice(0, 13).join('');
const textOf = (message: UIMessage | undefined): string =>
  (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
const assistant = (messages: readonly UIMessage[]) => messages.find((message) => message.role === 'assistant');

interface Gate {
  promise: Promise<void>;
  open: () => void;
}
function newGate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe.each(STORES)('reconnecting to a chat on %s', (_name, make) => {
  let dir: string;
  let drop: () => Promise<void>;
  let model: MockServer;
  let gate: Gate;
  let agent: ReturnType<typeof buildStreamAgent>;
  let http: Server;
  let handled: Promise<void>[];
  let urlA: string;
  let urlB: string;
  let child: Started;
  let ledger: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-reconnect-'));
    ledger = join(dir, 'ledger');
    const made = await make(dir);
    drop = made.drop;
    gate = newGate();
    model = await startMockServer(gatedModel(() => gate.promise));
    agent = buildStreamAgent(made.spec, ledger, model.url);
    const handler = chatHandler(agent.runner, { principal: (req) => ({ id: String(req.headers['x-user'] ?? 'alice') }) });
    handled = [];
    http = createServer((req, res) => void handled.push(handler(req, res)));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    urlA = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/chat`;
    // The store's tables exist before the other process opens it (each would make them; one does).
    await agent.runner.sessions?.loadSession('warm-up');
    child = startChild('chat/stream-child.ts', [made.spec, ledger, model.url]);
    await until(() => child.stdout().includes('\n') || child.hasExited(), 60_000, 'the chat server process to listen');
    const { port } = JSON.parse(child.stdout().split('\n')[0] as string) as { port: number };
    urlB = `http://127.0.0.1:${port}/api/chat`;
  }, 90_000);
  afterAll(async () => {
    gate.open();
    await Promise.all(handled);
    child.kill('SIGTERM');
    await child.exited;
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    await model.close();
    await (agent.store as unknown as { close(): Promise<void> }).close();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A page on the test's server whose reconnect goes to the other process with the position it read. */
  function droppingPage(chatId: string, taps: Tapped[]) {
    const position = () => {
      const first = taps[0] as Tapped;
      const [runId, from] = (first.position as string).split(':') as [string, string];
      return `${runId}:${Number(from) + first.parts.length}`;
    };
    const page: ReturnType<typeof pageChat<UIMessage>> = pageChat<UIMessage>(ai, {
      id: chatId,
      api: urlA,
      fetch: tapFetch(taps, {
        when: DROP_AT,
        shown: () => page.state.until((messages: readonly UIMessage[]) => textOf(assistant(messages)) === SHOWN_AT_DROP),
      }),
      sendAutomaticallyWhen: ai.lastAssistantMessageIsCompleteWithApprovalResponses,
      transport: {
        // The page kept what it had: the rest is sent, not the whole run again.
        resumeStreamIsReplay: false,
        prepareReconnectToStreamRequest: ({ id }) => ({
          api: `${urlB}/${encodeURIComponent(id)}/stream`,
          headers: { [CHAT_STREAM_HEADER]: position() },
        }),
      },
    });
    return page;
  }

  async function logOf(position: string | undefined) {
    const runId = (position as string).split(':')[0] as string;
    return (await (agent.store as unknown as StreamLogStore).readStream(runId, 0, 10_000))!;
  }

  let reference: UIMessage;

  it('an uninterrupted run, for comparison: text, a tool call and its progress', async () => {
    gate.open();
    const taps: Tapped[] = [];
    const { chat, state } = pageChat(ai, { id: 'c-whole', api: urlA, fetch: tapFetch(taps) });
    await chat.sendMessage({ text: 'report' });
    expect(chat.error).toBeUndefined();
    reference = assistant(state.messages) as UIMessage;
    expect(textOf(reference)).toBe(BEFORE_GATE.join('') + AFTER_TOOL.join(''));
    expect(taps[0]?.parts.some((part) => part.includes('"type":"data-toolnexus-progress"'))).toBe(true);
    expect(taps[0]?.position).toMatch(/^run-[0-9a-f-]+:0$/);
    // The log holds exactly what the page was sent.
    expect((await logOf(taps[0]?.position)).parts).toEqual(taps[0]?.parts);
  });

  it('dropped at ~30 %: another process sends the parts after its position, then the rest live; each part once', async () => {
    gate = newGate();
    const taps: Tapped[] = [];
    const { chat, state } = droppingPage('c-live', taps);
    await chat.sendMessage({ text: 'report' });
    expect(chat.status).toBe('error'); // the network dropped
    const first = taps[0] as Tapped;
    expect(deltas(first.parts)).toBe(13);
    const resuming = chat.resumeStream();
    // A reloaded page of the same chat (no position: the transport's default replay) follows the same run from its start.
    const reloaded = pageChat(ai, { id: 'c-live', api: urlB, fetch: tapFetch([]) });
    const replaying = reloaded.chat.resumeStream();
    // Before the gate opens, the page has the first turn's text: the three pieces it missed came from the log, through the other process.
    await state.until((messages: readonly UIMessage[]) => textOf(assistant(messages)) === BEFORE_GATE.join(''));
    await reloaded.state.until((messages: readonly UIMessage[]) => textOf(assistant(messages)) === BEFORE_GATE.join(''));
    gate.open();
    await resuming;
    await replaying;
    expect(reloaded.chat.error).toBeUndefined();
    expect(assistant(reloaded.state.messages)?.parts).toEqual(reference.parts);
    expect(chat.error).toBeUndefined();
    expect(chat.status).toBe('ready');
    const second = taps[1] as Tapped;
    expect(second.url).toBe(`${urlB}/c-live/stream`);
    expect(second.position).toBe(`${(first.position as string).split(':')[0]}:${first.parts.length}`);
    expect(second.parts.some((part) => part.includes('"type":"data-toolnexus-progress"'))).toBe(true);
    await Promise.all(handled);
    const log = await logOf(first.position);
    expect(log.open).toBe(false);
    expect([...first.parts, ...second.parts]).toEqual(log.parts);
    expect(first.parts.length / log.parts.length).toBeGreaterThan(0.2);
    expect(first.parts.length / log.parts.length).toBeLessThan(0.4);
    expect(textOf(assistant(state.messages))).toBe(textOf(reference));
    expect(assistant(state.messages)?.parts).toEqual(reference.parts);
  });

  it('the run ended while the page was away: the reconnect replays it to its end; a page with nothing to resume gets 204', async () => {
    gate = newGate();
    const taps: Tapped[] = [];
    const { chat, state } = droppingPage('c-ended', taps);
    await chat.sendMessage({ text: 'report' });
    gate.open();
    await Promise.all(handled);
    await chat.resumeStream();
    expect(chat.error).toBeUndefined();
    const [first, second] = taps as [Tapped, Tapped];
    const log = await logOf(first.position);
    expect([...first.parts, ...second.parts]).toEqual(log.parts);
    expect(assistant(state.messages)?.parts).toEqual(reference.parts);
    // A fresh page (no position, a replay as the transport expects) of a chat with no active run: nothing to send.
    const transport = new ai.DefaultChatTransport({ api: urlB });
    expect(await transport.reconnectToStream({ chatId: 'c-ended' })).toBeNull();
    // The same page again, at the end of the run: nothing left either.
    const end = await fetch(`${urlB}/c-ended/stream`, {
      headers: { [CHAT_STREAM_HEADER]: `${(first.position as string).split(':')[0]}:${log.next}` },
    });
    expect(end.status).toBe(204);
  });

  it('an approval asked while the page was away appears on reconnect as the same part; the page answers it; the run finishes once', async () => {
    gate = newGate();
    const taps: Tapped[] = [];
    const { chat, state } = droppingPage('c-approve', taps);
    await chat.sendMessage({ text: 'refund' });
    gate.open();
    await Promise.all(handled);
    const first = taps[0] as Tapped;
    // A fresh page (no position) of the halted chat gets the run from its first part, the approval in it.
    const fresh = pageChat(ai, { id: 'c-approve', api: urlB, fetch: tapFetch([]) });
    await fresh.chat.resumeStream();
    const freshParts = assistant(fresh.state.messages)?.parts ?? [];
    expect(freshParts).toContainEqual(expect.objectContaining({ type: 'tool-refund', state: 'approval-requested' }));

    await chat.resumeStream();
    expect(chat.error).toBeUndefined();
    const second = taps[1] as Tapped;
    const log = await logOf(first.position);
    expect([...first.parts, ...second.parts]).toEqual(log.parts);
    const request = second.parts.find((part) => part.includes('"type":"tool-approval-request"')) as string;
    expect(request).toBeDefined();
    expect(second.parts.some((part) => part.includes('"type":"data-toolnexus-approval"'))).toBe(true);
    const approvalId = (JSON.parse(request) as { approvalId: string }).approvalId;
    const part = assistant(state.messages)?.parts.find((p) => p.type === 'tool-refund') as { state: string; approval: { id: string } };
    expect(part).toMatchObject({ state: 'approval-requested', approval: { id: approvalId } });
    expect(readLedger(ledger)).toHaveLength(0);

    await chat.addToolApprovalResponse({ id: approvalId, approved: true });
    await until(() => chat.status === 'ready' && textOf(assistant(state.messages)).endsWith(AFTER_TOOL.join('')), 60_000, 'the answer');
    await Promise.all(handled);
    expect(chat.error).toBeUndefined();
    expect(readLedger(ledger)).toHaveLength(1);
    const afterRefund = model.requests.filter((r) => JSON.stringify(r.body.messages ?? []).includes('"tool_call_id":"call_refund"'));
    expect(afterRefund).toHaveLength(1);
    expect((await agent.runner.sessions?.loadSession('alice:c-approve'))?.active).toBeUndefined();
    // The answer's response is the log's second segment: a later reconnect finds the whole run.
    const whole = await logOf(first.position);
    expect(whole.open).toBe(false);
    expect(whole.parts.length).toBeGreaterThan(log.parts.length);
  });

  it("nobody reaches another principal's stream: bob's chat of the same id has nothing, alice's position is refused", async () => {
    gate = newGate();
    const taps: Tapped[] = [];
    const { chat } = droppingPage('c-mine', taps);
    await chat.sendMessage({ text: 'report' });
    const position = taps[0]?.position as string;
    const asBob = await fetch(`${urlB}/c-mine/stream`, { headers: { 'x-user': 'bob' } });
    expect(asBob.status).toBe(204);
    const withPosition = await fetch(`${urlB}/c-mine/stream`, { headers: { 'x-user': 'bob', [CHAT_STREAM_HEADER]: position } });
    expect(withPosition.status).toBe(404);
    expect(await withPosition.json()).toMatchObject({ error: { reason: 'not_found' } });
    const bad = await fetch(`${urlB}/c-mine/stream`, { headers: { [CHAT_STREAM_HEADER]: 'no position' } });
    expect(bad.status).toBe(400);
    gate.open();
    await Promise.all(handled);
  });
});
