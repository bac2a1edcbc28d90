/**
 * The Webhooks' backoff on a fake clock (WebhooksOptions.clock): a retry waits for the clock,
 * not for wall time, so the test steps through it instead of racing timers with margins. The
 * deliveries themselves are real HTTP to a receiver on 127.0.0.1.
 */
import 'reflect-metadata';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Tool, Toolkit, pending } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { Webhooks, type WebhookFailure } from 'toolnexus-ts/webhooks';
import { FakeClock, until } from '../fixtures/fake-clock';

@Tool({ name: 'ask', description: 'Asks for an approval' })
class AskTool {
  run() {
    return pending({ kind: 'approval', prompt: 'Go?' });
  }
}

describe('Webhooks on a fake clock', () => {
  let server: Server;
  let url = '';
  const received: IncomingHttpHeaders[] = [];
  const replies = [500, 503, 200];
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(req.headers);
        res.writeHead(replies[Math.min(received.length - 1, replies.length - 1)]!).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('retries only when the clock reaches the backoff, doubling it up to maxRetryDelayMs, and signs with the clock’s time', async () => {
    const clock = new FakeClock();
    const failures: WebhookFailure[] = [];
    const hooks = new Webhooks({
      url,
      secret: 'whsec-fake-clock-0123456789',
      events: ['suspension.pending'],
      retryDelayMs: 1_000,
      maxRetryDelayMs: 1_500,
      timeoutMs: 30_000,
      clock,
      onFailure: (f) => failures.push(f),
    });
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(AskTool), observers: [hooks] });
    await coordinator.execute('ask', {});

    await until(() => failures.length === 1 && clock.timers.length === 1);
    expect(received).toHaveLength(1);
    expect(received[0]!['x-toolnexus-timestamp']).toBe(String(Math.floor(clock.now() / 1000)));
    // The first retry waits retryDelayMs, ±20 % jitter; nothing is sent before the clock gets there.
    const first = clock.timers[0]!;
    expect(first.ms).toBeGreaterThanOrEqual(800);
    expect(first.ms).toBeLessThanOrEqual(1_200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toHaveLength(1);
    clock.advance(first.ms - 1);
    expect(clock.timers).toHaveLength(1);
    clock.advance(1);

    await until(() => failures.length === 2 && clock.timers.length === 1);
    expect(received).toHaveLength(2);
    expect(received[1]!['x-toolnexus-timestamp']).toBe(String(Math.floor(clock.now() / 1000)));
    expect(received[1]!['x-toolnexus-delivery']).toBe(received[0]!['x-toolnexus-delivery']);
    // The second would be 2 000 ms ± 20 %: capped at maxRetryDelayMs.
    expect(clock.timers[0]!.ms).toBe(1_500);
    clock.advance(1_500);

    await hooks.flush();
    expect(received).toHaveLength(3);
    expect(failures.map((f) => [f.status, f.final])).toEqual([
      [500, false],
      [503, false],
    ]);
    await hooks.close();
  });

  it('follows the models’ retry policy: a Retry-After date sets the wait, and 425 is final', async () => {
    const clock = new FakeClock();
    const asked: number[] = [];
    const strict = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        asked.push(clock.now());
        if (asked.length === 1) res.writeHead(503, { 'retry-after': new Date(clock.now() + 5_000).toUTCString() }).end();
        else res.writeHead(425).end();
      });
    });
    await new Promise<void>((resolve) => strict.listen(0, '127.0.0.1', resolve));
    const failures: WebhookFailure[] = [];
    const hooks = new Webhooks({
      url: `http://127.0.0.1:${(strict.address() as AddressInfo).port}/`,
      secret: 'whsec-fake-clock-0123456789',
      events: ['suspension.pending'],
      clock,
      onFailure: (f) => failures.push(f),
    });
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(AskTool), observers: [hooks] });
    await coordinator.execute('ask', {});
    await until(() => failures.length === 1 && clock.timers.length === 1);
    // The date is read against the clock: five seconds from its now, not the backoff's one.
    expect(clock.timers[0]!.ms).toBe(5_000);
    clock.advance(5_000);
    await hooks.flush();
    expect(failures.map((f) => [f.status, f.final, f.reason])).toEqual([
      [503, false, 'the receiver answered HTTP 503'],
      [425, true, 'the receiver answered HTTP 425'],
    ]);
    await hooks.close();
    await new Promise<void>((resolve) => strict.close(() => resolve()));
  });

  it('times out an attempt by the clock', async () => {
    const clock = new FakeClock();
    const hanging = createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const failures: WebhookFailure[] = [];
    const hooks = new Webhooks({
      url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/`,
      secret: 'whsec-fake-clock-0123456789',
      events: ['suspension.pending'],
      maxAttempts: 1,
      timeoutMs: 10_000,
      clock,
      onFailure: (f) => failures.push(f),
    });
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(AskTool), observers: [hooks] });
    await coordinator.execute('ask', {});
    await until(() => clock.timers.length === 1);
    expect(clock.timers[0]!.ms).toBe(10_000);
    expect(failures).toEqual([]);
    clock.advance(10_000);
    await hooks.flush();
    expect(failures.map((f) => [f.reason, f.final])).toEqual([['no answer within 10000 ms; gave up after 1 attempts', true]]);
    await hooks.close();
    hanging.closeAllConnections();
    await new Promise<void>((resolve) => hanging.close(() => resolve()));
  });
});
