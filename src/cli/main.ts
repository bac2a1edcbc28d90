#!/usr/bin/env node
/**
 * The `toolnexus-ts` command (package.json `bin`): operates suspensions in a store from a
 * terminal or a script. docs/operating.md, "CLI".
 */
import 'reflect-metadata';
import { runCli } from './run';

void runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
});
