/**
 * The `toolnexus-ts pending …` CLI (docs/operating.md, "CLI") as a real child process, on a
 * real SQLite file and on the PostgreSQL server of jest's global setup: listing, showing,
 * approving exactly once (with the tools), declining and cancelling (without them), the
 * audit it records, and exit codes that tell not found / already settled / refused apart.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { REDACTED, pendingOf } from 'toolnexus-ts';
import { ResumeCoordinator, type SuspensionStore, type SuspendedCall } from 'toolnexus-ts/suspension';
import type { RunStore } from 'toolnexus-ts/agents';
import type { DeliveryStore } from 'toolnexus-ts/channels';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { startChild, type Exit } from '../fixtures/children';
import { createCoordinator } from '../fixtures/cli-tools';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';

const TOOLS = join(__dirname, '..', 'fixtures', 'cli-tools.ts');
const CLI = join('..', '..', 'src', 'cli', 'main.ts');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-cli-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tmpdir(): string {
  return process.env.TMPDIR ?? '/tmp';
}

/** Runs the CLI; `env` adds to the test's environment. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<Exit> {
  return startChild(CLI, args, env).exited;
}

const json = <T>(exit: Exit): T => JSON.parse(exit.stdout) as T;
const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);

/** The scenarios, on whichever store `target` opens. */
function describeCli(label: string, target: () => { store: () => SuspensionStore & RunStore; args: string[] }): void {
  describe(`the CLI on ${label}`, () => {
    let store: SuspensionStore & RunStore;
    let seed: ResumeCoordinator;
    let storeArgs: string[];
    let ledger: string;
    let env: Record<string, string>;
    let n = 0;

    beforeEach(() => {
      const t = target();
      store = t.store();
      storeArgs = t.args;
      seed = createCoordinator(store);
      ledger = join(dir, `ledger-${label.replace(/\W/g, '')}-${++n}.txt`);
      env = { CLI_LEDGER: ledger };
    });
    afterEach(async () => {
      await store.close();
    });

    const suspend = async (cents: number, runId = 'run-cli') =>
      pendingOf(await seed.execute('pay', { cents, apiKey: `sk-secret-${cents}` }, undefined, { runId }))!.id;

    it('lists and shows open suspensions, redacting arguments whole without --tools and only sensitive fields with them', async () => {
      const id = await suspend(125);
      const table = await cli(['pending', 'list', ...storeArgs], env);
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/^ID\s+STATUS\s+KIND\s+TOOL\s+RUN\s+AGE\s+EXPIRES\s+PROMPT/);
      expect(table.stdout).toContain(id);
      // Without --tools no field is known to be safe: every argument value is redacted in the prompt too (fails closed).
      expect(table.stdout).toMatch(/pending\s+approval\s+pay\s+run-cli\s+\d+s\s+Pay \[redacted\] cents\?/);

      const bare = json<SuspendedCall[]>(await cli(['pending', 'list', '--json', ...storeArgs], env));
      expect(bare.map((c) => [c.request.id, c.args])).toEqual([[id, REDACTED]]);
      const withTools = json<SuspendedCall[]>(await cli(['pending', 'list', '--json', '--tools', TOOLS, ...storeArgs], env));
      expect(withTools[0]!.args).toEqual({ cents: 125, apiKey: REDACTED });

      const show = await cli(['pending', 'show', id, '--tools', TOOLS, ...storeArgs], env);
      expect(show.code).toBe(0);
      expect(show.stdout).toContain(`id:           ${id}`);
      expect(show.stdout).toContain('arguments:    {"cents":125,"apiKey":"[redacted]"}');
      for (const out of [table, show]) expect(out.stdout + out.stderr).not.toContain('sk-secret');
      expect(JSON.stringify([bare, withTools])).not.toContain('sk-secret');

      const missing = await cli(['pending', 'show', 'pnd-nope', ...storeArgs], env);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toMatch(/^no suspension pnd-nope in /);
    });

    it('shows what downstream systems answered a call (its receipts) in pending show and pending history', async () => {
      const id = await suspend(410);
      const claim = (await store.claim(id, { id, ok: true }, 60_000))!;
      const receipt = { system: 'payments', id: 'ch_5', status: 'succeeded', at: '2030-01-01T00:00:00.000Z', attempt: 1 };
      await store.recordReceipt!(claim, receipt);
      const show = await cli(['pending', 'show', id, ...storeArgs], env);
      expect(show.stdout).toContain('receipts:     payments says ch_5 succeeded (attempt 1)');
      await store.complete(claim, { status: 'resolved', outcome: { output: 'paid 410', isError: false }, receipts: [receipt] });
      const history = await cli(['pending', 'history', ...storeArgs], env);
      expect(history.stdout).toMatch(/RECEIPTS/);
      expect(history.stdout).toContain('payments ch_5 succeeded');
    });

    it('pending show lists where the request went: platform, target, posted or not, final, attempts and the next try (text and --json: the inbox delivery view)', async () => {
      const id = await suspend(510);
      const quiet = await suspend(520);
      const deliveries = (store as unknown as { deliveries: DeliveryStore }).deliveries;
      const at = Date.parse('2030-01-01T00:00:00.000Z');
      const row = { callId: id, platform: 'slack', version: 1, done: false, attempts: 0, dueAt: at };
      await deliveries.insertDelivery({ ...row, id: `${id} slack:C0FINANCE`, target: 'slack:C0FINANCE' });
      await deliveries.saveDelivery({
        ...row,
        id: `${id} slack:C0FINANCE`,
        target: 'slack:C0FINANCE',
        version: 2,
        message: { threadId: 'slack:C0FINANCE:', id: '1700000001.000100' },
        shown: 'key',
        dueAt: at + 60_000,
      });
      await deliveries.insertDelivery({ ...row, id: `${id} slack:C0OPS`, target: 'slack:C0OPS' });
      await deliveries.saveDelivery({
        ...row,
        id: `${id} slack:C0OPS`,
        target: 'slack:C0OPS',
        version: 2,
        attempts: 2,
        dueAt: at + 2000,
        error: 'An API error occurred: channel_not_found\u001b[2J',
      });
      await deliveries.insertDelivery({
        ...row,
        id: `${id} escalation slack:D0DEE`,
        target: 'slack:D0DEE',
        dueAt: at + 3_600_000,
        escalation: true,
      });
      const show = await cli(['pending', 'show', id, ...storeArgs], env);
      expect(show.code).toBe(0);
      const table = show.stdout.slice(show.stdout.indexOf('deliveries:'));
      expect(table.split('\n')[1]).toMatch(/^ {2}PLATFORM\s+TARGET\s+STATE\s+FAILURES\s+NEXT\s+ERROR$/);
      expect(table).toMatch(/slack\s+slack:C0FINANCE\s+posted\s+0\s+check 2030-01-01T00:01:00.000Z/);
      expect(table).toMatch(/slack\s+slack:D0DEE\s+escalation, not posted\s+0\s+check 2030-01-01T01:00:00.000Z/);
      expect(table).toMatch(
        /slack\s+slack:C0OPS\s+not posted\s+2\s+try 2030-01-01T00:00:02.000Z\s+An API error occurred: channel_not_found/,
      );
      // A platform's words never reach the terminal as control characters.
      expect(show.stdout).not.toContain('\u001b');
      const shownJson = json<SuspendedCall & { deliveries: unknown[] }>(await cli(['pending', 'show', id, '--json', ...storeArgs], env));
      expect(shownJson.request.id).toBe(id);
      expect(shownJson.deliveries).toEqual([
        {
          platform: 'slack',
          target: 'slack:C0FINANCE',
          posted: true,
          final: false,
          attempts: 0,
          nextAttemptAt: '2030-01-01T00:01:00.000Z',
        },
        {
          platform: 'slack',
          target: 'slack:C0OPS',
          posted: false,
          final: false,
          attempts: 2,
          nextAttemptAt: '2030-01-01T00:00:02.000Z',
          // The inbox's view: the platform's words on one line, control characters turned to spaces.
          error: 'An API error occurred: channel_not_found [2J',
        },
        {
          platform: 'slack',
          target: 'slack:D0DEE',
          posted: false,
          final: false,
          attempts: 0,
          nextAttemptAt: '2030-01-01T01:00:00.000Z',
          escalation: true,
        },
      ]);
      // Settled and final: no next try; a call never delivered says so.
      const first = (await deliveries.getDelivery(`${id} slack:C0FINANCE`))!;
      await deliveries.saveDelivery({ ...first, version: first.version + 1, done: true });
      expect(json<{ deliveries: unknown[] }>(await cli(['pending', 'show', id, '--json', ...storeArgs], env)).deliveries[0]).toEqual({
        platform: 'slack',
        target: 'slack:C0FINANCE',
        posted: true,
        final: true,
        attempts: 0,
      });
      expect((await cli(['pending', 'show', id, ...storeArgs], env)).stdout).toMatch(/slack:C0FINANCE\s+posted, final/);
      expect((await cli(['pending', 'show', quiet, ...storeArgs], env)).stdout).toContain('deliveries:   (none)');
      expect(json<{ deliveries: unknown[] }>(await cli(['pending', 'show', quiet, '--json', ...storeArgs], env)).deliveries).toEqual([]);
    });

    it('refuses to approve without the tools, then approves exactly once with them and records who and why', async () => {
      const id = await suspend(300);
      const refused = await cli(['pending', 'approve', id, ...storeArgs], env);
      expect(refused.code).toBe(5);
      expect(refused.stderr).toMatch(/^refused: approving .* runs pay again, so the CLI needs the tools: pass --tools MODULE/);
      expect((await seed.get(id))?.status).toBe('pending');

      const approved = await cli(['pending', 'approve', id, '--reason', 'PO 2291', '--as', 'ops', '--tools', TOOLS, ...storeArgs], env);
      expect({ code: approved.code, stderr: approved.stderr }).toEqual({ code: 0, stderr: '' });
      expect(approved.stdout.trim()).toBe(`approved ${id}: paid 300`);
      expect(lines(ledger)).toHaveLength(1);
      const call = (await seed.get(id))!;
      expect(call).toMatchObject({ status: 'resolved', answeredBy: { id: 'cli:ops', name: 'ops' }, comment: 'PO 2291' });

      const again = await cli(['pending', 'approve', id, '--json', '--tools', TOOLS, ...storeArgs], env);
      expect(again.code).toBe(4);
      expect(json<{ code: number; message: string }>(again)).toMatchObject({
        code: 4,
        message: `${id} is already resolved by cli:ops at ${call.answeredAt!}`,
      });
      expect(lines(ledger)).toHaveLength(1);
    });

    it('exits 6 when the tools module’s answer policy does not allow the principal, changing nothing', async () => {
      const id = await suspend(410);
      const policyEnv = { ...env, CLI_APPROVERS: 'cli:ann' };
      const bob = await cli(['pending', 'approve', id, '--as', 'bob', '--tools', TOOLS, ...storeArgs], policyEnv);
      expect(bob.code).toBe(6);
      expect(bob.stderr.trim()).toBe('not allowed: cli:bob may not answer approval requests of pay');
      const declined = await cli(['pending', 'decline', id, '--as', 'bob', '--tools', TOOLS, ...storeArgs], policyEnv);
      expect(declined.code).toBe(6);
      expect((await seed.get(id))?.status).toBe('pending');
      expect(lines(ledger)).toHaveLength(0);
      const ann = await cli(['pending', 'approve', id, '--as', 'ann', '--tools', TOOLS, ...storeArgs], policyEnv);
      expect(ann.code).toBe(0);
      expect(lines(ledger)).toHaveLength(1);
    });

    it('approves with edited arguments (pending edit), lists and revokes grants', async () => {
      const id = await suspend(2000);
      const bad = await cli(['pending', 'edit', id, '--args', '{"cents":"x","apiKey":"k"}', '--tools', TOOLS, ...storeArgs], env);
      expect(bad.code).toBe(5);
      expect(bad.stderr).toMatch(/^refused: the edited arguments of .* are invalid: cents: cents must be an integer number/);
      expect((await seed.get(id))?.status).toBe('pending');
      const edited = await cli(['pending', 'edit', id, '--args', '{"cents":1500,"apiKey":"sk-new"}', '--tools', TOOLS, ...storeArgs], env);
      expect({ code: edited.code, stderr: edited.stderr }).toEqual({ code: 0, stderr: '' });
      expect(lines(ledger).map((l) => l.split(' ')[0])).toEqual(['1500']);
      expect((await seed.get(id))?.answer?.args).toEqual({ cents: 1500, apiKey: 'sk-new' });

      const grant = await seed.grant({ by: { id: 'cli:ann' }, tool: 'pay', scope: 'principal', subject: 'customer:rita' });
      const listed = await cli(['grants', 'list', ...storeArgs], env);
      expect(listed.stdout.trim()).toBe(`${grant.id}  pay  principal customer:rita  by cli:ann  live`);
      expect((await cli(['grants', 'revoke', grant.id, ...storeArgs], env)).code).toBe(0);
      expect((await cli(['grants', 'revoke', grant.id, ...storeArgs], env)).code).toBe(3);
      expect(json<Array<{ revokedAt?: string }>>(await cli(['grants', 'list', '--json', ...storeArgs], env))[0]?.revokedAt).toEqual(
        expect.any(String),
      );
    });

    it('lets two racing approvers settle a call once: one exits 0, the other 4 naming the winner', async () => {
      const id = await suspend(77);
      const [a, b] = await Promise.all(
        ['alice', 'bob'].map((who) => cli(['pending', 'approve', id, '--as', who, '--json', '--tools', TOOLS, ...storeArgs], env)),
      );
      expect([a!.code, b!.code].sort()).toEqual([0, 4]);
      const winner = (await seed.get(id))!.answeredBy!.id;
      const loser = a!.code === 4 ? a! : b!;
      expect(json<{ message: string }>(loser).message).toMatch(new RegExp(`by ${winner}`));
      expect(lines(ledger)).toHaveLength(1);
    });

    it('declines and cancels without tools, telling the model the reason; the default principal is the OS user', async () => {
      const declinedId = await suspend(10);
      const cancelledId = await suspend(20);
      const declined = await cli(['pending', 'decline', declinedId, '--reason', 'over budget', ...storeArgs], env);
      expect(declined.code).toBe(0);
      expect(declined.stdout.trim()).toBe(`declined ${declinedId}: error: declined/expired: Pay 10 cents? (declined: "over budget")`);
      expect(await seed.get(declinedId)).toMatchObject({
        status: 'declined',
        answeredBy: { id: `cli:${userInfo().username}` },
        comment: 'over budget',
      });
      const cancelled = await cli(['pending', 'cancel', cancelledId, '--json', ...storeArgs], env);
      expect(cancelled.code).toBe(0);
      expect(json<{ ok: boolean; call: SuspendedCall }>(cancelled)).toMatchObject({ ok: true, call: { status: 'cancelled' } });
      expect((await cli(['pending', 'cancel', cancelledId, ...storeArgs], env)).code).toBe(4);
      expect((await cli(['pending', 'decline', 'pnd-missing', ...storeArgs], env)).code).toBe(3);
      expect(lines(ledger)).toHaveLength(0);

      const history = await cli(['pending', 'history', '--json', ...storeArgs], env);
      expect(json<SuspendedCall[]>(history).map((c) => [c.request.id, c.status])).toEqual([
        [cancelledId, 'cancelled'],
        [declinedId, 'declined'],
      ]);
      const text = await cli(['pending', 'history', '--status', 'declined', ...storeArgs], env);
      expect(text.stdout).toMatch(new RegExp(`${declinedId}\\s+declined\\s+pay\\s+\\S+\\s+cli:\\S+\\s+over budget`));
    });

    it('refuses a call whose binding this CLI cannot check (another TOOLNEXUS_BINDING_KEY), changing nothing', async () => {
      const keyed = createCoordinator(store);
      const previous = process.env.TOOLNEXUS_BINDING_KEY;
      process.env.TOOLNEXUS_BINDING_KEY = 'the-app-key';
      let id: string;
      try {
        id = pendingOf(await createCoordinator(store).execute('pay', { cents: 5, apiKey: 'k' }))!.id;
      } finally {
        if (previous === undefined) delete process.env.TOOLNEXUS_BINDING_KEY;
        else process.env.TOOLNEXUS_BINDING_KEY = previous;
      }
      const refused = await cli(['pending', 'decline', id, ...storeArgs], env);
      expect(refused.code).toBe(5);
      expect(refused.stderr).toMatch(
        /^refused: suspension .* does not match the call that made it: .* set TOOLNEXUS_BINDING_KEY to the same key\)$/m,
      );
      expect((await keyed.get(id))?.status).toBe('pending');
      const right = await cli(['pending', 'decline', id, ...storeArgs], { ...env, TOOLNEXUS_BINDING_KEY: 'the-app-key' });
      expect(right.code).toBe(0);
    });
  });
}

describeCli('a SQLite file', () => {
  const file = join(dir, `cli-${Date.now()}-${Math.random().toString(36).slice(2)}.db`);
  return { store: () => new SqliteStore({ filename: file }), args: ['--store', `sqlite:${file}`] };
});

const schema = uniqueSchema('cli');
let url = '';
beforeAll(async () => {
  url = await postgresUrl();
});
afterAll(async () => {
  await dropSchema(url, schema);
});
let prefix = 0;
describeCli('PostgreSQL', () => {
  const tablePrefix = `cli${++prefix}_`;
  return {
    store: () => new PostgresStore({ connectionString: url, schema, tablePrefix }),
    args: ['--store', url, '--schema', schema, '--table-prefix', tablePrefix],
  };
});

describe('the CLI command line', () => {
  it('prints help, and exits 2 on an unknown command, a missing id, an unknown option or no store', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('pending approve ID [--reason R] [--data JSON]');
    expect(help.stdout).toContain('Exit codes: 0 done, 1 failed, 2 usage, 3 not found, 4 already settled, 5 refused.');
    const file = join(dir, 'usage.db');
    new SqliteStore(file).close().catch(() => undefined);
    const cases: Array<[string[], RegExp]> = [
      [['pending', 'frobnicate'], /^unknown command: pending frobnicate/],
      [['pending', 'approve', '--store', `sqlite:${file}`], /^pending approve takes 1 argument\(s\)/],
      [['pending', 'list', '--colour', '--store', `sqlite:${file}`], /Unknown option '--colour'/],
      [['pending', 'list'], /^no store: pass --store sqlite:\.\/file\.db or --store postgres:\/\/…/],
      [['pending', 'list', '--store', 'mysql://x'], /^--store must be sqlite:PATH or postgres:\/\/…, got "mysql:\/\/x"/],
      [['pending', 'approve', 'x', '--data', '[1]', '--store', `sqlite:${file}`], /^--data must be a JSON object/],
    ];
    for (const [args, message] of cases) {
      const exit = await cli(args, { TOOLNEXUS_STORE: '' });
      expect({ args, code: exit.code }).toEqual({ args, code: 2 });
      expect(exit.stderr).toMatch(message);
    }
  });

  it('exits 1 for a store it cannot open, naming the file, and never prints a connection password', async () => {
    const missing = await cli(['pending', 'list', '--store', `sqlite:${join(dir, 'no-such.db')}`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^no SQLite file at .*no-such\.db/);
    expect(existsSync(join(dir, 'no-such.db'))).toBe(false);
    const unreachable = await cli(['pending', 'list', '--store', 'postgres://ops:s3cret-pw@127.0.0.1:1/db']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^error: /);
    expect(unreachable.stdout + unreachable.stderr).not.toContain('s3cret-pw');
  });
});
