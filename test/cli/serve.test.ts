/**
 * `toolnexus-ts serve`: the inbox for a store on 127.0.0.1, in a real child process over a
 * real SQLite file (docs/operating.md, "Inbox").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { startInboxServer } from '../../src/cli/commands/serve';
import { runCli } from '../../src/cli/run';
import { startChild, until } from '../fixtures/children';
import { inboxRunner, SECRET_IBAN } from '../fixtures/inbox/tools';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-serve-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A halted run's approval in a SQLite file, as the service that asked left it. */
async function haltedRun(file: string): Promise<{ runId: string; id: string }> {
  const store = new SqliteStore({ filename: file });
  try {
    const result = await inboxRunner(store).run(`pay 700 from acc-1 to ${SECRET_IBAN}`);
    return { runId: result.runId, id: result.pending?.id as string };
  } finally {
    await store.close();
  }
}

describe('toolnexus-ts serve', () => {
  it('says what is wrong with its arguments (exit 2), before opening anything', async () => {
    const run = async (args: string[]) => {
      const err: string[] = [];
      const code = await runCli(['serve', ...args], { out: () => undefined, err: (t) => err.push(t), env: {}, cwd: dir });
      return [code, err.join('\n')] as const;
    };
    expect(await run(['--store', 'sqlite:./a.db', '--port', '99999'])).toEqual([2, '--port must be a port number (0 for any free one)']);
    expect(await run(['--store', 'sqlite:./a.db', '--auth', 'open'])).toEqual([2, '--auth must be token or none-local-only']);
    expect((await run([]))[1]).toMatch(/^no store/);
    expect((await run(['--verbose']))[0]).toBe(2);
  });

  it('in a child process: prints the URL and a made-up token, serves the store, and answering resumes the run there', async () => {
    const file = join(dir, 'app.db');
    const { runId, id } = await haltedRun(file);
    const tools = join(__dirname, '..', 'fixtures', 'inbox', 'tools-module.ts');
    // The real command line: src/cli/main.ts is the package's bin.
    const child = startChild('../../src/cli/main.ts', ['serve', '--store', `sqlite:${file}`, '--tools', tools], {
      TOOLNEXUS_INBOX_TOKEN: '',
    });
    try {
      await until(() => /sign in with this token/.test(child.stdout()), 30_000, 'serve to print its URL and token').catch(
        (error: Error) => {
          throw new Error(`${error.message}: ${child.stdout()}${child.stderr()}`);
        },
      );
      const url = /^inbox for sqlite:.*: (http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(child.stdout())?.[1] as string;
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
    const store = new SqliteStore({ filename: file });
    const server = await startInboxServer({
      coordinator: new ResumeCoordinator({ toolkit: new Toolkit(), store }),
      port: 0,
      auth: 'token',
      env: { TOOLNEXUS_INBOX_TOKEN: 'a-token-from-the-environment' },
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
      await store.close();
    }
  });
});
