/**
 * `better-sqlite3` and `pg` are optional peers: importing the package never loads them, and
 * building a store without its driver installed fails with an error naming the command.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- jest.isolateModules needs a synchronous require to see the mocked driver */
function missing(name: string): never {
  throw Object.assign(new Error(`Cannot find module '${name}' from 'store.ts'`), { code: 'MODULE_NOT_FOUND' });
}

afterEach(() => {
  jest.resetModules();
});

describe('optional peer dependencies', () => {
  it('SqliteStore without better-sqlite3 names `npm install better-sqlite3@12`', () => {
    jest.doMock('better-sqlite3', () => missing('better-sqlite3'));
    jest.isolateModules(() => {
      const { SqliteStore } = require('toolnexus-ts/sqlite') as typeof import('toolnexus-ts/sqlite');
      const errors = require('toolnexus-ts/suspension') as typeof import('toolnexus-ts/suspension');
      expect(() => new SqliteStore(':memory:')).toThrow(errors.StoreError);
      expect(() => new SqliteStore(':memory:')).toThrow(
        'SqliteStore needs the package "better-sqlite3", an optional peer dependency of toolnexus-ts that is not installed: run `npm install better-sqlite3@12`',
      );
    });
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
    jest.doMock('better-sqlite3', () => {
      throw new Error('was compiled against a different Node.js version');
    });
    jest.isolateModules(() => {
      const { SqliteStore } = require('toolnexus-ts/sqlite') as typeof import('toolnexus-ts/sqlite');
      expect(() => new SqliteStore(':memory:')).toThrow('was compiled against a different Node.js version');
    });
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
    });
    const loaded = Object.keys(require.cache);
    expect(loaded.filter((file) => /node_modules[\\/](pg|better-sqlite3)[\\/]/.test(file))).toEqual([]);
  });
});
/* eslint-enable @typescript-eslint/no-require-imports -- end of the isolated requires */
