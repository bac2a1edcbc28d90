/**
 * Webhooks (docs/operating.md, "Webhooks") against a real receiving server on 127.0.0.1:
 * signed deliveries, retries after a 500, a hanging receiver that never blocks the call,
 * a bounded queue, and no secret anywhere but the signature.
 */
import 'reflect-metadata';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IsInt, IsString } from 'class-validator';
import {
  InvalidArgumentError,
  REDACTED,
  Sensitive,
  Tool,
  Toolkit,
  defineTool,
  pending,
  pendingOf,
  success,
  type ToolContext,
} from 'toolnexus-ts';
import { ResumeCoordinator, rulesPolicy } from 'toolnexus-ts/suspension';
import { Webhooks, verifyWebhook, type WebhookFailure, type WebhookPayload } from 'toolnexus-ts/webhooks';

const SECRET = 'whsec-test-0123456789abcdef';

class PayArgs {
  @IsInt() cents!: number;
  @IsString() @Sensitive() apiKey!: string;
}

@Tool({ name: 'pay', description: 'Pays after approval', args: PayArgs })
class PayTool {
  run(args: PayArgs, ctx?: ToolContext) {
    if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Pay ${args.cents}?` });
    return success(`paid ${args.cents}`);
  }
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

type Reply = number | 'hang';

/** A webhook receiver: records every request and answers each with the next reply (the last one repeats). */
class Receiver {
  readonly received: Received[] = [];
  private readonly hanging: ServerResponse[] = [];
  private readonly waiters: Array<() => void> = [];
  private server!: Server;
  url = '';

  constructor(private readonly replies: Reply[]) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const reply = this.replies[Math.min(this.received.length, this.replies.length - 1)] ?? 200;
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        for (const wake of this.waiters.splice(0)) wake();
        if (reply === 'hang') this.hanging.push(res);
        else res.writeHead(reply).end('body the sender must not need');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks?tenant=acme`;
  }

  async requests(n: number): Promise<Received[]> {
    while (this.received.length < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.received;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const receivers: Receiver[] = [];
const hooks: Webhooks[] = [];
async function receiver(...replies: Reply[]): Promise<Receiver> {
  const r = new Receiver(replies.length ? replies : [200]);
  await r.start();
  receivers.push(r);
  return r;
}
function webhooks(options: ConstructorParameters<typeof Webhooks>[0]): Webhooks {
  const w = new Webhooks(options);
  hooks.push(w);
  return w;
}
afterEach(async () => {
  await Promise.all(hooks.splice(0).map((w) => w.close()));
  await Promise.all(receivers.splice(0).map((r) => r.stop()));
});

const parse = (r: Received) => JSON.parse(r.body) as WebhookPayload;

describe('Webhooks', () => {
  it('delivers signed pending and settled events with the redacted call and an inbox link', async () => {
    const server = await receiver(204);
    const failures: WebhookFailure[] = [];
    const hook = webhooks({
      url: server.url,
      secret: SECRET,
      inboxUrl: 'https://ops.example.com/inbox',
      onFailure: (f) => failures.push(f),
    });
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(PayTool), observers: [hook] });
    const id = pendingOf(await coordinator.execute('pay', { cents: 900, apiKey: 'sk-live-secret' }, undefined, { runId: 'run-9' }))!.id;
    await coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'user:dana', name: 'Dana' }, comment: 'ok' });
    const [first, second] = await server.requests(2);
    await hook.flush();

    for (const request of [first!, second!]) {
      const timestamp = request.headers['x-toolnexus-timestamp'] as string;
      const signature = request.headers['x-toolnexus-signature'] as string;
      // The documented check, by hand: HMAC-SHA256 over "<timestamp>.<raw body>", hex, after "v1=".
      expect(signature).toBe(`v1=${createHmac('sha256', SECRET).update(`${timestamp}.${request.body}`).digest('hex')}`);
      expect(verifyWebhook({ secret: SECRET, body: request.body, timestamp, signature })).toBe(true);
      expect(verifyWebhook({ secret: SECRET, body: `${request.body} `, timestamp, signature })).toBe(false);
      expect(verifyWebhook({ secret: 'another-secret-0123456789', body: request.body, timestamp, signature })).toBe(false);
      expect(verifyWebhook({ secret: SECRET, body: request.body, timestamp, signature, now: (Number(timestamp) + 301) * 1000 })).toBe(
        false,
      );
      expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
      expect(request.headers['content-type']).toBe('application/json');
      const everything = JSON.stringify(request.headers) + request.body;
      expect(everything).not.toContain(SECRET);
      expect(everything).not.toContain('sk-live-secret');
    }
    const pendingEvent = parse(first!);
    expect(first!.headers['x-toolnexus-event']).toBe('suspension.pending');
    expect(first!.headers['x-toolnexus-delivery']).toBe(pendingEvent.id);
    expect(pendingEvent).toEqual({
      id: expect.any(String) as unknown,
      type: 'suspension.pending',
      occurredAt: expect.any(String) as unknown,
      suspension: {
        id,
        kind: 'approval',
        prompt: 'Pay 900?',
        tool: 'pay',
        args: { cents: 900, apiKey: REDACTED },
        status: 'pending',
        runId: 'run-9',
        createdAt: expect.any(String) as unknown,
        url: `https://ops.example.com/inbox?suspension=${encodeURIComponent(id)}`,
      },
    });
    const settledEvent = parse(second!);
    expect(settledEvent.type).toBe('suspension.settled');
    expect(settledEvent.suspension).toMatchObject({
      id,
      status: 'resolved',
      outcome: { isError: false, output: 'paid 900' },
      answeredBy: { id: 'user:dana', name: 'Dana' },
      comment: 'ok',
      args: { cents: 900, apiKey: REDACTED },
    });
    expect(settledEvent.id).not.toBe(pendingEvent.id);
    expect(failures).toEqual([]);
  });

  it('retries after a 500 with the same delivery id and a fresh signature, then stops', async () => {
    const server = await receiver(500, 200);
    const failures: WebhookFailure[] = [];
    const delivered: string[] = [];
    const hook = webhooks({
      url: server.url,
      secret: SECRET,
      retryDelayMs: 50,
      onFailure: (f) => failures.push(f),
      onDelivered: (d) => delivered.push(`${d.id}:${d.attempts}:${d.status}`),
    });
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(PayTool), observers: [hook] });
    await coordinator.execute('pay', { cents: 1, apiKey: 'k' });
    await hook.flush();
    const [first, second] = server.received;
    expect(server.received).toHaveLength(2);
    expect(second!.headers['x-toolnexus-delivery']).toBe(first!.headers['x-toolnexus-delivery']);
    expect(second!.body).toBe(first!.body);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(35); // the backoff (50 ms, jittered by at most 20%) was waited
    for (const r of [first!, second!]) {
      const headers = { timestamp: r.headers['x-toolnexus-timestamp'] as string, signature: r.headers['x-toolnexus-signature'] as string };
      expect(verifyWebhook({ secret: SECRET, body: r.body, ...headers })).toBe(true);
    }
    expect(failures).toEqual([
      expect.objectContaining({ attempts: 1, status: 500, final: false, reason: 'the receiver answered HTTP 500' }),
    ]);
    expect(delivered).toEqual([`${String(first!.headers['x-toolnexus-delivery'])}:2:200`]);
  });

  it('gives up after maxAttempts, and at once on a 4xx other than 408/429', async () => {
    const failing = await receiver(503);
    const failures: WebhookFailure[] = [];
    const hook = webhooks({ url: failing.url, secret: SECRET, retryDelayMs: 1, maxAttempts: 3, onFailure: (f) => failures.push(f) });
    hook.onPending({
      request: { id: 'pnd-x', kind: 'approval', prompt: 'x?' },
      tool: 'pay',
      args: {},
      status: 'pending',
      createdAt: new Date().toISOString(),
    });
    await hook.flush();
    expect(failing.received).toHaveLength(3);
    expect(failures.map((f) => [f.attempts, f.final])).toEqual([
      [1, false],
      [2, false],
      [3, true],
    ]);
    expect(failures[2]!.reason).toBe('the receiver answered HTTP 503; gave up after 3 attempts');

    const refusing = await receiver(401);
    const refused: WebhookFailure[] = [];
    const strict = webhooks({ url: refusing.url, secret: SECRET, retryDelayMs: 1, onFailure: (f) => refused.push(f) });
    strict.onPending({
      request: { id: 'pnd-y', kind: 'approval', prompt: 'y?' },
      tool: 'pay',
      args: {},
      status: 'pending',
      createdAt: new Date().toISOString(),
    });
    await strict.flush();
    expect(refusing.received).toHaveLength(1);
    expect(refused).toEqual([expect.objectContaining({ attempts: 1, status: 401, final: true, reason: 'the receiver answered HTTP 401' })]);
  });

  it('never blocks the tool call: execute, resolve and cancel return while the receiver hangs', async () => {
    const server = await receiver('hang');
    const hook = webhooks({ url: server.url, secret: SECRET, timeoutMs: 60_000, onFailure: () => undefined });
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(PayTool), observers: [hook] });
    const a = pendingOf(await coordinator.execute('pay', { cents: 2, apiKey: 'k' }))!.id;
    const b = pendingOf(await coordinator.execute('pay', { cents: 3, apiKey: 'k' }))!.id;
    expect(await coordinator.resolve({ id: a, ok: true })).toEqual(success('paid 2'));
    await coordinator.cancel(b);
    // Every call above returned; the receiver holds all four deliveries unanswered.
    expect((await server.requests(4)).length).toBe(4);
    expect(hook.pendingDeliveries).toBe(4);
    expect((await coordinator.get(a))?.status).toBe('resolved');
  });

  it('times out an attempt that gets no answer and retries it', async () => {
    const server = await receiver('hang', 200);
    const failures: WebhookFailure[] = [];
    const hook = webhooks({ url: server.url, secret: SECRET, timeoutMs: 100, retryDelayMs: 1, onFailure: (f) => failures.push(f) });
    hook.onPending({
      request: { id: 'pnd-t', kind: 'approval', prompt: 't?' },
      tool: 'pay',
      args: {},
      status: 'pending',
      createdAt: new Date().toISOString(),
    });
    await hook.flush();
    expect(server.received).toHaveLength(2);
    expect(failures).toEqual([expect.objectContaining({ attempts: 1, final: false, reason: 'no answer within 100 ms' })]);
  });

  it('holds at most maxQueue deliveries and reports the ones it drops', async () => {
    const server = await receiver('hang');
    const failures: WebhookFailure[] = [];
    const hook = webhooks({ url: server.url, secret: SECRET, maxQueue: 2, concurrency: 1, onFailure: (f) => failures.push(f) });
    for (const id of ['q1', 'q2', 'q3', 'q4'])
      hook.onPending({
        request: { id, kind: 'approval', prompt: `${id}?` },
        tool: 'pay',
        args: {},
        status: 'pending',
        createdAt: new Date().toISOString(),
      });
    expect(hook.pendingDeliveries).toBe(2);
    expect(failures.map((f) => [f.suspensionId, f.final, f.reason])).toEqual([
      ['q3', true, 'the webhook queue is full (2 deliveries held)'],
      ['q4', true, 'the webhook queue is full (2 deliveries held)'],
    ]);
    await server.requests(1);
    await hook.close();
    expect(hook.pendingDeliveries).toBe(0);
    expect(
      failures
        .filter((f) => f.reason.includes('closed'))
        .map((f) => f.suspensionId)
        .sort(),
    ).toEqual(['q1', 'q2']);
  });

  it('reports an unreachable receiver without the secret or the URL’s query, and only sends the events asked for', async () => {
    const server = await receiver(200);
    const url = server.url;
    await server.stop();
    receivers.splice(receivers.indexOf(server), 1);
    const failures: WebhookFailure[] = [];
    const warnings: string[] = [];
    const warn = jest.spyOn(console, 'warn').mockImplementation((line: string) => void warnings.push(line));
    try {
      const quiet = webhooks({ url, secret: SECRET, maxAttempts: 1, events: ['suspension.settled'] });
      quiet.onPending({
        request: { id: 'pnd-skip', kind: 'approval', prompt: '?' },
        tool: 'pay',
        args: {},
        status: 'pending',
        createdAt: new Date().toISOString(),
      });
      expect(quiet.pendingDeliveries).toBe(0);
      const hook = webhooks({ url, secret: SECRET, maxAttempts: 1, onFailure: (f) => failures.push(f) });
      const fallback = webhooks({ url, secret: SECRET, maxAttempts: 1 });
      for (const h of [hook, fallback])
        h.onSettled({
          request: { id: 'pnd-u', kind: 'approval', prompt: 'u?' },
          tool: 'pay',
          args: {},
          status: 'cancelled',
          createdAt: new Date().toISOString(),
        });
      await Promise.all([hook.flush(), fallback.flush()]);
    } finally {
      warn.mockRestore();
    }
    expect(failures).toHaveLength(1);
    expect(failures[0]!.reason).toMatch(/^the request failed: fetch failed \(.*ECONNREFUSED.*\); gave up after 1 attempts$/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^toolnexus-ts: webhook suspension.settled for suspension pnd-u to http:\/\/127\.0\.0\.1:\d+\/hooks was given up/,
    );
    for (const text of [...warnings, JSON.stringify(failures)]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('tenant=acme');
    }
  });

  it('refuses bad options with InvalidArgumentError, naming no secret', () => {
    const cases: Array<[unknown, string]> = [
      [{ url: 'ftp://x', secret: SECRET }, 'Webhooks: url must be an http: or https: URL'],
      [{ url: 'not a url', secret: SECRET }, 'Webhooks: url must be an absolute http: or https: URL'],
      [
        { url: 'https://user:pw@x.example', secret: SECRET },
        'Webhooks: url must not carry credentials; deliveries are authenticated by their signature',
      ],
      [{ url: 'https://x.example', secret: 'short' }, 'Webhooks: secret must be a string or Uint8Array of at least 16 bytes'],
      [{ url: 'https://x.example', secret: SECRET, maxAttempts: 0 }, 'Webhooks: maxAttempts must be a finite number of at least 1, got 0'],
      [
        { url: 'https://x.example', secret: SECRET, events: ['suspension.created'] },
        'Webhooks: events must be a list of "suspension.pending", "suspension.settled", "suspension.signed", "suspension.escalated", "suspension.expired", "suspension.refused", "grant.given", "grant.revoked"',
      ],
    ];
    for (const [options, message] of cases) expect(() => new Webhooks(options as never)).toThrow(new InvalidArgumentError(message));
  });
});

describe('who-may-answer events (docs/who-may-answer.md)', () => {
  it('sends suspension.refused with who was refused and why, and suspension.signed with the signatures so far', async () => {
    const server = await receiver(204);
    const hook = webhooks({
      url: server.url,
      secret: 'a-webhook-secret-of-enough-bytes',
      events: ['suspension.refused', 'suspension.signed', 'suspension.escalated'],
    });
    const quorumPay = defineTool({
      name: 'wire',
      description: 'Wires after two approvals',
      inputSchema: { type: 'object', properties: {} },
      run: (_args, ctx) => (ctx?.answer ? success('wired') : pending({ kind: 'approval', prompt: 'Wire?', data: { quorum: { of: 2 } } })),
    });
    const coordinator = new ResumeCoordinator({
      toolkit: new Toolkit().register(quorumPay),
      policy: rulesPolicy([{ principals: ['finance:a', 'finance:b'] }]),
      observers: [hook],
    });
    const id = pendingOf(await coordinator.execute('wire', {}))!.id;
    await expect(coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'clerk:z' } })).rejects.toMatchObject({
      code: 'TOOLNEXUS_ANSWER_REFUSED',
    });
    await coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'finance:a' } });
    const [refused, signed] = (await server.requests(2)).map(parse);
    expect(refused).toMatchObject({
      type: 'suspension.refused',
      suspension: {
        id,
        status: 'pending',
        refusal: { by: { id: 'clerk:z' }, action: 'answer', reason: 'clerk:z may not answer approval requests of wire' },
      },
    });
    expect(signed).toMatchObject({
      type: 'suspension.signed',
      suspension: { id, status: 'pending', signatures: [{ by: { id: 'finance:a' } }] },
    });
  });
});
