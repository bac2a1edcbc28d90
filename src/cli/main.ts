#!/usr/bin/env node
/**
 * The `toolnexus-ts` command (package.json `bin`): operates suspensions in a store from a
 * terminal or a script. docs/operating.md, "CLI".
 */
import 'reflect-metadata';
import { once } from 'node:events';
import { runCli } from './run';

// Node.js 22 calls node:sqlite experimental on stderr the first time a store opens it. This
// command's stderr is its interface (scripts read it), and the store chose that driver, not the
// person running the command: that one notice is left out; every other warning is printed.
const emitWarning = process.emitWarning.bind(process) as (...args: unknown[]) => void;
process.emitWarning = (warning: string | Error, ...rest: unknown[]): void => {
  const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: unknown } | undefined)?.type;
  if (type === 'ExperimentalWarning' && String(warning).includes('SQLite')) return;
  emitWarning(warning, ...rest);
};

void runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  cwd: process.cwd(),
  drained: () => (process.stdout.writableNeedDrain ? once(process.stdout, 'drain').then(() => undefined) : Promise.resolve()),
}).then((code) => {
  process.exitCode = code;
});
