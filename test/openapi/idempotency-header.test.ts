/**
 * The idempotency header of an HTTP tool (docs/tools.md, "Idempotency keys and receipts"): the
 * call's `ctx.idempotencyKey` in `Idempotency-Key` on every request that changes something, under
 * another name when asked, never on GET, never when turned off, never over a header the request
 * already names; the key is read (and so computed) only when sent. Real parts: a server on 127.0.0.1.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { Toolkit, type ToolContext } from 'toolnexus-ts';
import { httpTool } from 'toolnexus-ts/openapi';
import { listening } from '../fixtures/listen';

const closers: Array<() => Promise<void>> = [];
let base: string;
let seen: IncomingHttpHeaders[];

beforeEach(async () => {
  seen = [];
  base = await listening(
    createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"ch_7","status":"succeeded"}'));
    }),
    closers,
  );
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const KEY = 'tnx_the-call-key';

function keyed(): { ctx: ToolContext; reads: () => number } {
  let reads = 0;
  const ctx: ToolContext = {};
  Object.defineProperty(ctx, 'idempotencyKey', { get: () => (reads++, KEY), enumerable: true });
  return { ctx, reads: () => reads };
}

it('sends the key in Idempotency-Key on a POST, and reads it only then', async () => {
  const toolkit = new Toolkit().register(
    httpTool({ name: 'pay', description: 'Pay', method: 'POST', url: `${base}/charges`, inputSchema: { type: 'object' } }),
    httpTool({ name: 'look', description: 'Look', method: 'GET', url: `${base}/charges`, inputSchema: { type: 'object' } }),
  );
  const post = keyed();
  expect((await toolkit.execute('pay', { amount: 5 }, post.ctx)).isError).toBe(false);
  expect(seen[0]?.['idempotency-key']).toBe(KEY);
  expect(post.reads()).toBe(1);
  const get = keyed();
  await toolkit.execute('look', {}, get.ctx);
  expect(seen[1]?.['idempotency-key']).toBeUndefined();
  expect(get.reads()).toBe(0);
  // A call without a key sends none.
  await toolkit.execute('pay', { amount: 5 });
  expect(seen[2]?.['idempotency-key']).toBeUndefined();
});

it('uses the header a tool names, sends none when turned off, and never overrides a header the request names', async () => {
  const spec = { description: 'Pay', method: 'POST', url: `${base}/charges`, inputSchema: { type: 'object' } } as const;
  const toolkit = new Toolkit().register(
    httpTool({ ...spec, name: 'paypal', idempotencyHeader: 'PayPal-Request-Id' }),
    httpTool({ ...spec, name: 'off', idempotencyHeader: false }),
    httpTool({ ...spec, name: 'own', headers: { 'idempotency-key': 'set-by-host' } }),
  );
  await toolkit.execute('paypal', {}, keyed().ctx);
  await toolkit.execute('off', {}, keyed().ctx);
  await toolkit.execute('own', {}, keyed().ctx);
  expect(seen.map((h) => [h['paypal-request-id'], h['idempotency-key']])).toEqual([
    [KEY, undefined],
    [undefined, undefined],
    [undefined, 'set-by-host'],
  ]);
  expect(() => httpTool({ ...spec, name: 'bad', idempotencyHeader: 'Bad Header' })).toThrow(/idempotencyHeader must be a header name/);
});

it('records the receipt the tool reads out of the answer, through ctx.receipt', async () => {
  const receipts: unknown[] = [];
  const tool = httpTool({
    name: 'pay',
    description: 'Pay',
    method: 'POST',
    url: `${base}/charges`,
    inputSchema: { type: 'object' },
    receipt: ({ json, status }) => {
      const charge = json as { id: string; status: string };
      return { system: 'payments', id: charge.id, status: `${charge.status} (HTTP ${status})` };
    },
  });
  const ctx: ToolContext = { receipt: async (receipt) => void receipts.push(receipt) };
  await new Toolkit().register(tool).execute('pay', {}, ctx);
  expect(receipts).toEqual([{ system: 'payments', id: 'ch_7', status: 'succeeded (HTTP 200)' }]);
});
