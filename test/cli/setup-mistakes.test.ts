/**
 * Issue 27 item 7: set-up mistakes the CLI (a real child process) and the PostgreSQL store
 * used to pass silently: a `--schema` typo listed "(none)", exited 0 and created that
 * schema with tables; a left-out `--schema` read `public` without a word; a `mysql://` URL
 * was tried as PostgreSQL and reported as an outage.
 */
import { join } from 'node:path';
import { InvalidArgumentError } from 'toolnexus-ts';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { startChild, type Exit } from '../fixtures/children';
import { createCoordinator } from '../fixtures/cli-tools';
import { dropSchema, postgresUrl, sql, uniqueSchema } from '../fixtures/pg/server';

const CLI = join('..', '..', 'src', 'cli', 'main.ts');
const cli = (args: string[]): Promise<Exit> => startChild(CLI, args, { TOOLNEXUS_STORE: '' }).exited;

const schema = uniqueSchema('setup');
const typo = `${schema}_typo`;
const fresh = uniqueSchema('setup_new');
// A prefix of its own, so `public` holds none of these tables whatever other tests do there.
const tablePrefix = `setup${process.pid}_`;
let url = '';
const schemaExists = async (name: string) => (await sql(url, 'SELECT 1 FROM pg_namespace WHERE nspname = $1', [name])).length > 0;

beforeAll(async () => {
  url = await postgresUrl();
  const store = new PostgresStore({ connectionString: url, schema, tablePrefix });
  await createCoordinator(store).execute('pay', { cents: 7, apiKey: 'sk-x' }, undefined, { runId: 'run-setup' });
  await store.close();
});
afterAll(async () => {
  for (const name of [schema, typo, fresh]) await dropSchema(url, name);
});

describe('the CLI on PostgreSQL', () => {
  it('refuses a --schema that does not exist, names the schema that has the tables, and creates nothing', async () => {
    const exit = await cli(['pending', 'list', '--store', url, '--schema', typo, '--table-prefix', tablePrefix]);
    expect(exit.code).toBe(2);
    expect(exit.stdout).toBe('');
    expect(exit.stderr).toContain(`no schema ${typo} at `);
    expect(exit.stderr).toContain(`${tablePrefix}suspensions is in --schema ${schema}`);
    expect(exit.stderr).toContain('or --create to create the tables');
    expect(await schemaExists(typo)).toBe(false);
  });

  it('without --schema reads public, as the store does, and says so when the tables are elsewhere', async () => {
    const exit = await cli(['pending', 'list', '--store', url, '--table-prefix', tablePrefix]);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain(`no table ${tablePrefix}suspensions in schema public (the default: --schema was not given)`);
    expect(exit.stderr).toContain(`is in --schema ${schema}`);
  });

  it('lists the schema that has the tables', async () => {
    const exit = await cli(['pending', 'list', '--store', url, '--schema', schema, '--table-prefix', tablePrefix]);
    expect(exit.code).toBe(0);
    expect(exit.stdout).toContain('Pay 7 cents?');
  });

  it('with --create makes a new, empty store where asked', async () => {
    const exit = await cli(['pending', 'list', '--store', url, '--schema', fresh, '--table-prefix', tablePrefix, '--create']);
    expect(exit.code).toBe(0);
    expect(exit.stdout.trim()).toBe('(none)');
    expect(await schemaExists(fresh)).toBe(true);
  });

  it('refuses a URL whose scheme is not PostgreSQL, before any connection', async () => {
    const exit = await cli(['pending', 'list', '--store', 'mysql://ops:pw@127.0.0.1:3306/db']);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toMatch(/^--store must be sqlite:PATH or postgres:\/\/…, got "mysql:\/\/ops:\*\*\*@127\.0\.0\.1:3306\/db"/);
  });
});

describe('PostgresStore', () => {
  it('refuses a connection string of another database instead of reporting PostgreSQL unavailable', () => {
    const make = () => new PostgresStore({ connectionString: 'mysql://ops:pw@127.0.0.1:3306/shop' });
    expect(make).toThrow(InvalidArgumentError);
    expect(make).toThrow(
      'PostgresStore: connectionString has the scheme "mysql:", which is not PostgreSQL: give a postgres:// or postgresql:// URL',
    );
  });

  it('still takes postgres:// and postgresql:// URLs', async () => {
    for (const scheme of ['postgres', 'postgresql', 'POSTGRES']) {
      await new PostgresStore({ connectionString: url.replace(/^postgres(ql)?/, scheme), schema, tablePrefix }).close();
    }
  });
});
