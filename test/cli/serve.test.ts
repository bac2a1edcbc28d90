/**
 * `toolnexus-ts serve`: the inbox for a store on 127.0.0.1, in a real child process over a
 * real SQLite file (docs/operating.md, "Inbox").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from 'toolnexus-ts';
import { SqlitePendingStore } from 'toolnexus-ts/sqlite';
import { parseServeArgs, startInboxServer } from '../../src/cli/serve';
import { startChild, until } from '../fixtures/children';
import { inboxRunner, SECRET_IBAN } from '../fixtures/inbox/tools';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-serve-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A halted run's approval in a SQLite file, as the service that asked left it. */
async function haltedRun(file: string): Promise<{ runId: string; id: string }> {
  const store = new SqlitePendingStore({ filename: file });
  try {
    const result = await inboxRunner(store).run(`pay 700 from acc-1 to ${SECRET_IBAN}`);
    return { runId: result.runId, id: result.pending?.id as string };
  } finally {
    await store.close();
  }
}

describe('toolnexus-ts serve', () => {
  it('reads its arguments and says what is wrong', () => {
    expect(parseServeArgs(['--store', 'sqlite:./a.db', '--port=8080', '--tools', 'm.js'])).toEqual({
      store: 'sqlite:./a.db',
      port: 8080,
      tools: 'm.js',
      auth: 'token',
    });
    expect(parseServeArgs(['--store=postgres://h/db', '--auth', 'none-local-only'])).toMatchObject({ auth: 'none-local-only' });
    for (const [args, problem] of [
      [[], /needs --store/],
      [['--store'], /--store needs a value/],
      [['--store', 'a.db', '--port', '99999'], /--port must be a port number/],
      [['--store', 'x', '--auth', 'open'], /--auth must be token or none-local-only/],
      [['--store', 'x', '--verbose'], /unknown argument "--verbose"/],
    ] as const) {
      expect(() => parseServeArgs(args)).toThrow(InvalidArgumentError);
      expect(() => parseServeArgs(args)).toThrow(problem);
    }
  });

  it('in a child process: prints the URL and a made-up token, serves the store, and answering resumes the run there', async () => {
    const file = join(dir, 'app.db');
    const { runId, id } = await haltedRun(file);
    const child = startChild(
      'inbox/serve-child.ts',
      ['--store', `sqlite:${file}`, '--tools', join(__dirname, '..', 'fixtures', 'inbox', 'tools-module.ts')],
      {
        TOOLNEXUS_INBOX_TOKEN: '',
      },
    );
    try {
      await until(() => /sign in with this token/.test(child.stdout()), 30_000, 'serve to print its URL and token');
      const url = /inbox: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(child.stdout())?.[1] as string;
      const token = /: ([\w-]{32})\n/.exec(child.stdout())?.[1] as string;
      expect((await fetch(`${url}api/suspensions`)).status).toBe(401);
      const auth = { authorization: `Bearer ${token}` };
      const listed = (await (await fetch(`${url}api/suspensions`, { headers: auth })).json()) as {
        suspensions: Array<{ id: string; args: unknown }>;
      };
      expect(listed.suspensions.map((s) => [s.id, s.args])).toEqual([[id, { amount: 700, from: 'acc-1', toIban: '[redacted]' }]]);
      const answered = await fetch(`${url}api/suspensions/${id}/answer`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ ok: true, comment: 'from serve' }),
      });
      expect(answered.status).toBe(200);
      expect(((await answered.json()) as { run: unknown }).run).toEqual({ runId, status: 'done', text: 'Done: moved 700 from acc-1' });
    } finally {
      child.kill('SIGTERM');
    }
    expect((await child.exited).code).toBe(0);
  });

  it('without --tools, declines and cancels but cannot approve (the tool is not registered here)', async () => {
    const file = join(dir, 'app.db');
    const first = await haltedRun(file);
    const second = await haltedRun(file);
    const server = await startInboxServer(parseServeArgs(['--store', `sqlite:${file}`]), {
      TOOLNEXUS_INBOX_TOKEN: 'a-token-from-the-environment',
    });
    try {
      expect(server.madeUpToken).toBeUndefined();
      const post = (id: string, body: unknown) =>
        fetch(`${server.url}api/suspensions/${id}/answer`, {
          method: 'POST',
          headers: { authorization: 'Bearer a-token-from-the-environment', 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const approve = await post(first.id, { ok: true });
      expect([approve.status, ((await approve.json()) as { error: { code: string } }).error.code]).toEqual([
        409,
        'TOOLNEXUS_UNREGISTERED_TOOL',
      ]);
      expect((await post(second.id, { ok: false, reason: 'declined', comment: 'no' })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
