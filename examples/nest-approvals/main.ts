/**
 * A Nest HTTP service whose agent needs a human's approval to move money:
 *   POST /chat            runs the agent; the response carries the pending request
 *   GET  /pending         lists open suspensions
 *   POST /answers/:id     answers one and continues the run
 * `main()` boots it on 127.0.0.1 (any free port) and walks through the whole exchange.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApprovalsApp } from './app';
import type { PendingView, RunView } from './chat.controller';

async function call<T>(base: string, method: string, path: string, body?: unknown, user = 'bob'): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-user': user, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

export async function main(): Promise<void> {
  const app = await createApprovalsApp();
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`;
  try {
    console.log(`nest-approvals listening on ${base}`);

    const chat = await call<RunView>(base, 'POST', '/chat', { message: 'pay 2500 from acc-1 to acc-2' });
    console.log(`POST /chat as bob -> ${chat.status} ${chat.body.status}: ${chat.body.pending?.prompt}`);
    if (chat.body.status !== 'pending' || !chat.body.pending) throw new Error(`expected a pending run, got ${JSON.stringify(chat.body)}`);

    const open = await call<PendingView[]>(base, 'GET', '/pending');
    console.log(
      `GET /pending -> ${open.status} ${open.body.map((p) => `${p.request.id} (${p.tool}, requested by ${String(p.request.data?.requestedBy)})`).join(', ')}`,
    );

    const wrong = await call<{ message: string }>(base, 'POST', '/answers/pnd-does-not-exist', { ok: true });
    console.log(`POST /answers/pnd-does-not-exist -> ${wrong.status} ${wrong.body.message}`);

    const answered = await call<RunView>(base, 'POST', `/answers/${chat.body.pending.id}`, { ok: true }, 'alice');
    console.log(`POST /answers/${chat.body.pending.id} as alice -> ${answered.status} ${answered.body.status}: ${answered.body.text}`);
    if (answered.body.status !== 'done') throw new Error(`expected the run to finish, got ${JSON.stringify(answered.body)}`);

    const again = await call<RunView>(base, 'POST', `/answers/${chat.body.pending.id}`, { ok: true }, 'alice');
    console.log(`POST /answers/${chat.body.pending.id} again (a retry) -> ${again.status} ${again.body.status}`);

    const contradicting = await call<{ message: string }>(base, 'POST', `/answers/${chat.body.pending.id}`, {
      ok: false,
      reason: 'declined',
    });
    console.log(`POST /answers/${chat.body.pending.id} declined afterwards -> ${contradicting.status} ${contradicting.body.message}`);

    const after = await call<PendingView[]>(base, 'GET', '/pending');
    console.log(`GET /pending -> ${after.status} ${after.body.length} open`);
  } finally {
    await app.close();
  }
}

if (require.main === module) void main();
