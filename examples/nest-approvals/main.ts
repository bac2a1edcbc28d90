/**
 * A Nest HTTP service whose agent needs a human's approval to move money:
 *   POST /chat                                 runs the agent; the response carries the pending request
 *   GET  /inbox/                               the approvals inbox page (sign in with a token)
 *   GET  /inbox/api/suspensions                open suspensions, newest first
 *   POST /inbox/api/suspensions/:id/answer     answers one and continues the run
 * `main()` boots it on 127.0.0.1 (any free port) and walks through the whole exchange.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SuspensionView } from 'toolnexus-ts/inbox';
import { createApprovalsApp, DEMO_APPROVERS } from './app';
import type { RunView } from './chat.controller';

interface Sent<T> {
  status: number;
  body: T;
}

async function call<T>(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Sent<T>> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

const as = (id: string) => ({ authorization: `Bearer ${DEMO_APPROVERS.find((entry) => entry.principal.id === id)?.token}` });

type Answered = { suspension: SuspensionView; run?: { status: string; text: string } } & { error?: { message: string } };

export async function main(): Promise<void> {
  const app = await createApprovalsApp();
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`;
  try {
    console.log(`nest-approvals listening on ${base}; the inbox is at ${base}/inbox/`);

    const chat = await call<RunView>(base, 'POST', '/chat', { message: 'pay 2500 from acc-1 to acc-2' }, { 'x-user': 'bob' });
    console.log(`POST /chat as bob -> ${chat.status} ${chat.body.status}: ${chat.body.pending?.prompt}`);
    if (chat.body.status !== 'halted' || !chat.body.pending) throw new Error(`expected a pending run, got ${JSON.stringify(chat.body)}`);
    const id = chat.body.pending.id;

    const anonymous = await call<{ error: { message: string } }>(base, 'GET', '/inbox/api/suspensions');
    console.log(`GET /inbox/api/suspensions without a token -> ${anonymous.status} ${anonymous.body.error.message}`);

    const open = await call<{ suspensions: SuspensionView[] }>(base, 'GET', '/inbox/api/suspensions', undefined, as('alice'));
    console.log(
      `GET /inbox/api/suspensions as alice -> ${open.status} ${open.body.suspensions.map((s) => `${s.id} (${s.tool}, requested by ${s.requestedBy})`).join(', ')}`,
    );

    const wrong = await call<Answered>(base, 'POST', '/inbox/api/suspensions/pnd-does-not-exist/answer', { ok: true }, as('alice'));
    console.log(`POST .../pnd-does-not-exist/answer -> ${wrong.status} ${wrong.body.error?.message}`);

    const path = `/inbox/api/suspensions/${id}/answer`;
    const answered = await call<Answered>(base, 'POST', path, { ok: true, comment: 'invoice checked' }, as('alice'));
    console.log(`POST .../${id}/answer as alice -> ${answered.status} ${answered.body.run?.status}: ${answered.body.run?.text}`);
    if (answered.body.run?.status !== 'done') throw new Error(`expected the run to finish, got ${JSON.stringify(answered.body)}`);

    const again = await call<Answered>(base, 'POST', path, { ok: true, comment: 'invoice checked' }, as('alice'));
    console.log(`POST .../${id}/answer again as alice (a retry) -> ${again.status} ${again.body.suspension.status}`);

    const late = await call<Answered>(base, 'POST', path, { ok: false, reason: 'declined' }, as('carol'));
    console.log(`POST .../${id}/answer declined by carol afterwards -> ${late.status} ${late.body.error?.message}`);

    const after = await call<{ suspensions: SuspensionView[] }>(base, 'GET', '/inbox/api/suspensions', undefined, as('carol'));
    console.log(`GET /inbox/api/suspensions -> ${after.status} ${after.body.suspensions.length} open`);
  } finally {
    await app.close();
  }
}

if (require.main === module) void main();
