/**
 * `better-sqlite3` and `pg` are optional peers: importing the package never loads them, and
 * building a store without its driver installed fails with an error naming the command. The
 * SQLite store needs better-sqlite3 only where the runtime has no node:sqlite, or when asked.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/* eslint-disable @typescript-eslint/no-require-imports -- jest.isolateModules needs a synchronous require to see the mocked driver */
function missing(name: string): never {
  throw Object.assign(new Error(`Cannot find module '${name}' from 'store.ts'`), { code: 'MODULE_NOT_FOUND' });
}

afterEach(() => {
  jest.resetModules();
});

describe('optional peer dependencies', () => {
  /** What installs a better-sqlite3 this runtime loads: 13 needs Node.js 22. */
  const install = Number(process.versions.node.split('.')[0]) < 22 ? 'npm install better-sqlite3@12' : 'npm install better-sqlite3';

  /** This runtime as Node.js 20 is: no node:sqlite (there it is so already; on 22.13 and later, pretended). */
  function withoutNodeSqlite(): void {
    const getBuiltinModule = process.getBuiltinModule?.bind(process);
    if (!getBuiltinModule) return;
    jest
      .spyOn(process, 'getBuiltinModule')
      .mockImplementation((id: string) => (id === 'node:sqlite' || id === 'sqlite' ? undefined : getBuiltinModule(id)));
  }

  afterEach(() => jest.restoreAllMocks());

  it(`SqliteStore asked for better-sqlite3 without it names \`${install}\``, () => {
    jest.doMock('better-sqlite3', () => missing('better-sqlite3'));
    jest.isolateModules(() => {
      const { SqliteStore } = require('toolnexus-ts/sqlite') as typeof import('toolnexus-ts/sqlite');
      const errors = require('toolnexus-ts/suspension') as typeof import('toolnexus-ts/suspension');
      const build = () => new SqliteStore({ filename: ':memory:', driver: 'better-sqlite3' });
      expect(build).toThrow(errors.StoreError);
      expect(build).toThrow(
        `SqliteStore needs the package "better-sqlite3", an optional peer dependency of toolnexus-ts that is not installed: run \`${install}\``,
      );
    });
  });

  it('SqliteStore on a runtime without node:sqlite and without better-sqlite3 names both ways out', () => {
    withoutNodeSqlite();
    jest.doMock('better-sqlite3', () => missing('better-sqlite3'));
    jest.isolateModules(() => {
      const { SqliteStore } = require('toolnexus-ts/sqlite') as typeof import('toolnexus-ts/sqlite');
      const errors = require('toolnexus-ts/suspension') as typeof import('toolnexus-ts/suspension');
      expect(() => new SqliteStore(':memory:')).toThrow(errors.StoreError);
      expect(() => new SqliteStore(':memory:')).toThrow(
        `SqliteStore needs a SQLite driver: this Node.js (${process.version}) has no node:sqlite (built in from Node.js 22.13), ` +
          `and the optional peer dependency "better-sqlite3" is not installed: run \`${install}\`, or run on Node.js 22.13 or later`,
      );
      // The driver is looked for before the file is made: a store that cannot be built leaves none.
      const filename = join(tmpdir(), `toolnexus-no-driver-${process.pid}.db`);
      expect(() => new SqliteStore(filename)).toThrow(errors.StoreError);
      expect(existsSync(filename)).toBe(false);
      expect(() => new SqliteStore({ filename: ':memory:', driver: 'node:sqlite' })).toThrow(
        `SqliteStore was asked for node:sqlite, which this Node.js (${process.version}) does not have: run on Node.js 22.13 or later, or choose driver 'better-sqlite3'`,
      );
    });
  });

  it('on a runtime without node:sqlite, the store falls back to better-sqlite3', async () => {
    withoutNodeSqlite();
    jest.dontMock('better-sqlite3');
    const { SqliteStore } = await import('toolnexus-ts/sqlite');
    const store = new SqliteStore(':memory:');
    expect(store.driver).toBe('better-sqlite3');
    await store.close();
  });

  it('PostgresStore without pg names `npm install pg`', () => {
    jest.doMock('pg', () => missing('pg'));
    jest.isolateModules(() => {
      const { PostgresStore } = require('toolnexus-ts/postgres') as typeof import('toolnexus-ts/postgres');
      const errors = require('toolnexus-ts/suspension') as typeof import('toolnexus-ts/suspension');
      const build = () => new PostgresStore({ connectionString: 'postgres://127.0.0.1:1/none' });
      expect(build).toThrow(errors.StoreError);
      expect(build).toThrow(
        'PostgresStore needs the package "pg", an optional peer dependency of toolnexus-ts that is not installed: run `npm install pg`',
      );
    });
  });

  it('a driver that is installed but fails to load is reported as it is', () => {
    withoutNodeSqlite();
    jest.doMock('better-sqlite3', () => {
      throw new Error('was compiled against a different Node.js version');
    });
    jest.isolateModules(() => {
      const { SqliteStore } = require('toolnexus-ts/sqlite') as typeof import('toolnexus-ts/sqlite');
      expect(() => new SqliteStore(':memory:')).toThrow('was compiled against a different Node.js version');
      expect(() => new SqliteStore({ filename: ':memory:', driver: 'better-sqlite3' })).toThrow(
        'was compiled against a different Node.js version',
      );
    });
  });

  it('loadSkills over a folder without yaml names `npm install yaml`; importing the entry loads nothing', () => {
    jest.doMock('yaml', () => missing('yaml'));
    jest.isolateModules(() => {
      const skills = require('toolnexus-ts/skills') as typeof import('toolnexus-ts/skills');
      const root = require('toolnexus-ts') as typeof import('toolnexus-ts');
      expect(() => skills.loadSkills({ dirs: tmpdir() })).toThrow(root.MissingPeerError);
      expect(() => skills.loadSkills({ dirs: tmpdir() })).toThrow(
        'toolnexus-ts/skills needs the package "yaml", an optional peer dependency of toolnexus-ts that is not installed: run `npm install yaml`',
      );
      expect(skills.loadSkills({ skills: [{ name: 'data', content: 'no folder, no YAML' }] }).skills).toHaveLength(1);
    });
  });

  it('DbosRuns without @dbos-inc/dbos-sdk names its install; importing the entry loads nothing', () => {
    jest.doMock('@dbos-inc/dbos-sdk', () => missing('@dbos-inc/dbos-sdk'));
    jest.isolateModules(() => {
      const { DbosRuns } = require('toolnexus-ts/dbos') as typeof import('toolnexus-ts/dbos');
      const { AgentRunner } = require('toolnexus-ts/agents') as typeof import('toolnexus-ts/agents');
      const { FunctionModel } = require('toolnexus-ts/models') as typeof import('toolnexus-ts/models');
      const { Toolkit } = require('toolnexus-ts') as typeof import('toolnexus-ts');
      const runner = new AgentRunner({ model: new FunctionModel(() => 'ok'), toolkit: new Toolkit() });
      expect(() => new DbosRuns(runner)).toThrow(
        'toolnexus-ts/dbos needs the package "@dbos-inc/dbos-sdk", an optional peer dependency of toolnexus-ts that is not installed: run `npm install @dbos-inc/dbos-sdk`',
      );
    });
  });

  it('openApiTools without its parser names the install; httpTool and the import need none', async () => {
    jest.doMock('@readme/openapi-parser', () => missing('@readme/openapi-parser'));
    const { openApiTools, httpTool } = await import('toolnexus-ts/openapi');
    expect(httpTool({ name: 'h', description: 'd', method: 'GET', url: 'http://127.0.0.1:9/x' }).name).toBe('h');
    await expect(openApiTools({ openapi: '3.0.3', info: {}, paths: {} })).rejects.toThrow(
      'toolnexus-ts/openapi needs the package "@readme/openapi-parser", an optional peer dependency of toolnexus-ts that is not installed: run `npm install @readme/openapi-parser ajv yaml`',
    );
  });

  it('importing every entry but nest loads neither driver', () => {
    jest.isolateModules(() => {
      require('toolnexus-ts');
      require('toolnexus-ts/suspension');
      require('toolnexus-ts/agents');
      require('toolnexus-ts/memory');
      require('toolnexus-ts/sqlite');
      require('toolnexus-ts/postgres');
      require('toolnexus-ts/testing');
      require('toolnexus-ts/skills');
      require('toolnexus-ts/dbos');
      require('toolnexus-ts/openapi');
    });
    const loaded = Object.keys(require.cache);
    expect(loaded.filter((file) => /node_modules[\\/](pg|better-sqlite3|yaml|@dbos-inc|ajv|@readme)[\\/]/.test(file))).toEqual([]);
  });
});
/* eslint-enable @typescript-eslint/no-require-imports -- end of the isolated requires */
