#!/usr/bin/env node
/**
 * The package as its users get it: `npm pack`, then the tarball installed into scratch apps
 * in a temporary directory, each with `strict` and `skipLibCheck: false`:
 *
 *   alone     the package and nothing else: installs in seconds (no native compile), the
 *             required peers come with it, a SQLite store runs on node:sqlite where Node.js
 *             has it, and asking for better-sqlite3 names the missing driver;
 *   node10    CommonJS, `moduleResolution: node10` (typesVersions), with better-sqlite3 and Nest,
 *             on TypeScript 5.9 (7 removed `node10`: scripts/consumer-typescript.js checks both);
 *   nodenext  ESM, `module`/`moduleResolution: nodenext` (the exports map), the same program,
 *             also type-checked under `moduleResolution: bundler`;
 *   folder    the package installed from an unpacked folder (`npm install --install-links <dir>`).
 *
 * Each typed app type-checks (`tsc --noEmit`), then runs a program with a nested-DTO tool, a
 * SQLite suspension resolved across two stores on one file, and the Nest entry; `npm ls`
 * must show one class-validator and one class-transformer.
 *
 * The typed apps live in one scratch folder whose own node_modules holds what they share
 * (typescript, @types/node, Nest, better-sqlite3), as in a monorepo; each app installs the
 * package itself. better-sqlite3 is the one scripts/better-sqlite3.js keeps for this Node.js
 * (13 ships its N-API build; 12 compiles from source, ~2 minutes): the shared folder installs
 * it with `--ignore-scripts` and takes 12's compiled addon from there. The apps then build in parallel.
 * Run: npm run test:consumer (KEEP=1 keeps the scratch directory).
 */
'use strict';
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const REPO = path.resolve(__dirname, '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
const started = Date.now();
const timings = [];

/** Runs a command; resolves to its stdout, rejects with its output shown. `show` prints stdout. */
function run(cmd, args, cwd, options = {}) {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...options.env } },
      (error, stdout, stderr) => {
        if (error) {
          process.stderr.write(`\n$ ${cmd} ${args.join(' ')}   (in ${cwd})\n${stdout}${stderr}\n`);
          reject(new Error(`consumer test: \`${cmd} ${args.join(' ')}\` failed in ${cwd}`));
        } else {
          if (options.show && stdout.trim() !== '') process.stdout.write(`${stdout.trimEnd().replace(/^/gm, '   ')}\n`);
          resolve(stdout);
        }
      },
    );
  });
}

async function timed(label, work) {
  const t0 = Date.now();
  const result = await work();
  const seconds = (Date.now() - t0) / 1000;
  timings.push([label, seconds]);
  console.log(`   ${seconds.toFixed(1).padStart(5)} s  ${label}`);
  return result;
}

function check(condition, what) {
  if (!condition) throw new Error(`consumer test: ${what}`);
}

function write(dir, files) {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), typeof text === 'string' ? text : `${JSON.stringify(text, null, 2)}\n`);
  }
}

const versionOf = (name) => JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`, { paths: [REPO] }), 'utf8')).version;
// better-sqlite3 is no devDependency: the typed apps share the one scripts/better-sqlite3.js
// keeps for this Node.js (13 on Node.js 22 and later, 12 on 20), as the tests do.
const SQLITE_PACKAGE = process.env.TOOLNEXUS_BETTER_SQLITE3 || require('./better-sqlite3.js').ensure();
const SQLITE_VERSION = JSON.parse(fs.readFileSync(path.join(SQLITE_PACKAGE, 'package.json'), 'utf8')).version;
const DEV = {
  typescript: versionOf('typescript'),
  '@types/node': versionOf('@types/node'),
  '@nestjs/common': versionOf('@nestjs/common'),
  '@nestjs/core': versionOf('@nestjs/core'),
  rxjs: versionOf('rxjs'),
  // McpToolSource's client (the v2 SDK; its exports map has no `/package.json`). The 1.x SDK is not
  // installed: serveMcp serves both eras on the v2 server package.
  '@modelcontextprotocol/client': JSON.parse(
    fs.readFileSync(path.join(REPO, 'node_modules', '@modelcontextprotocol', 'client', 'package.json'), 'utf8'),
  ).version,
  // serveMcp, both eras (the v2 server package), loaded with the entry.
  '@modelcontextprotocol/server': JSON.parse(
    fs.readFileSync(path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server', 'package.json'), 'utf8'),
  ).version,
};

/** The program every typed app runs: a nested DTO, a durable SQLite suspension resolved elsewhere, Nest. */
const PROGRAM = `import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsInt, IsString, Min, ValidateNested } from 'class-validator';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Describe, Tool, Toolkit, failure, pending, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator, type SuspensionStore } from 'toolnexus-ts/suspension';
import type { RunStore } from 'toolnexus-ts/agents';
import { SqliteStore, type SqliteStoreOptions } from 'toolnexus-ts/sqlite';
import { PostgresStore, type PostgresStoreOptions } from 'toolnexus-ts/postgres';
import { ToolnexusModule } from 'toolnexus-ts/nest';
import type { runStoreConformance } from 'toolnexus-ts/testing';
import { McpToolSource, serveMcp, type McpToolContext } from 'toolnexus-ts/mcp';
import { createInbox, bearerToken, type InboxOptions } from 'toolnexus-ts/inbox';
import { toUIMessageStream, type UIStreamPart } from 'toolnexus-ts/chat';

class Money {
  @IsInt() @Min(1) @Describe('Amount in cents') cents!: number;
  @IsString() currency!: string;
}

class PayArgs {
  @IsString() @Describe('Who is paid') merchant!: string;
  @ValidateNested() @Type(() => Money) amount!: Money;
}

@Tool({ name: 'pay', description: 'Pay a merchant', args: PayArgs })
class PayTool {
  run(args: PayArgs, ctx?: ToolContext) {
    if (!(args.amount instanceof Money)) return failure('the nested DTO was not instantiated');
    if (!ctx?.answer) return pending({ kind: 'approval', prompt: \`Pay \${args.amount.cents} \${args.amount.currency} to \${args.merchant}?\` });
    if (!ctx.answer.ok) return failure('declined');
    return success({ paid: args.merchant, cents: args.amount.cents, by: ctx.answer.data?.approver });
  }
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error('consumer program: ' + what);
}

@Module({ imports: [ToolnexusModule.forRoot({})] })
class AppModule {}

async function main(): Promise<void> {
  // A nested DTO: valid arguments run, invalid nested ones are refused by name.
  const toolkit = new Toolkit().register(PayTool);
  const bad = await toolkit.execute('pay', { merchant: 'Hotel', amount: { cents: 0, currency: 'GBP' } });
  check(bad.isError && /amount\\.cents/.test(bad.output), 'invalid nested argument reported: ' + bad.output);
  const asked = await toolkit.execute('pay', { merchant: 'Hotel', amount: { cents: 1200, currency: 'GBP' } });
  check(pendingOf(asked)?.prompt === 'Pay 1200 GBP to Hotel?', 'nested DTO suspends: ' + asked.output);

  // A SQLite suspension, recorded by one coordinator and resolved by another on the same file.
  const dir = mkdtempSync(join(tmpdir(), 'tnx-consumer-app-'));
  try {
    const options: SqliteStoreOptions = { filename: join(dir, 'suspensions.db') };
    const first = new ResumeCoordinator({ toolkit, store: new SqliteStore(options) });
    const suspended = await first.execute('pay', { merchant: 'Hotel', amount: { cents: 1200, currency: 'GBP' } }, undefined, { runId: 'run-1' });
    const request = pendingOf(suspended);
    check(request !== undefined, 'the call suspended');
    const store: SuspensionStore & RunStore = new SqliteStore(options);
    const second = new ResumeCoordinator({ toolkit: new Toolkit().register(PayTool), store });
    const resolved = await second.resolve({ id: request!.id, ok: true, data: { approver: 'dana' } });
    check(!resolved.isError && JSON.parse(resolved.output).by === 'dana', 'resolved from the file: ' + resolved.output);
    check((await store.get(request!.id))?.status === 'resolved', 'the stored call is resolved');
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  // The Postgres types need no @types/pg; the class is there (pg itself is not installed here).
  const pgOptions: PostgresStoreOptions = { connectionString: 'postgres://127.0.0.1:1/none', poolConfig: { max: 2 } };
  check(typeof PostgresStore === 'function' && pgOptions.poolConfig?.max === 2, 'postgres entry');
  const conformance: typeof runStoreConformance | undefined = undefined;
  check(conformance === undefined, 'testing entry types');

  // The inbox entry: a handler over a coordinator, refusing a request without credentials.
  const inboxOptions: InboxOptions = { coordinator: new ResumeCoordinator({ toolkit }), authorize: bearerToken('consumer-token-0123456789') };
  const inbox = createInbox(inboxOptions);
  const refused = await new Promise<number>((resolve) => {
    const response = { statusCode: 0, headersSent: false, setHeader() {}, end() { resolve(response.statusCode); } };
    inbox({ url: '/api/suspensions', method: 'GET', headers: {}, socket: {} } as never, response as never);
  });
  check(refused === 401, 'the inbox refuses a request without credentials: ' + refused);
  inbox.close();

  // The chat entry (no \`ai\` package installed here): a run's events as UI message stream parts.
  const uiParts: UIStreamPart[] = [];
  async function* oneText() { yield { type: 'text' as const, delta: 'hi' }; }
  for await (const part of toUIMessageStream(oneText(), { messageId: 'm' })) uiParts.push(part);
  check(uiParts.map((p) => p.type).join() === 'start,start-step,text-start,text-delta,text-end,finish-step,finish', 'chat entry: ' + JSON.stringify(uiParts));

  // The Nest entry: a module that imports ToolnexusModule boots and hands out its Toolkit.
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
  check(app.get(Toolkit) instanceof Toolkit, 'Nest provides the Toolkit');
  await app.close();
  // The MCP entry: the Toolkit served over Streamable HTTP, used back through McpToolSource.
  const mcpServer = await serveMcp(toolkit, { transport: 'http' });
  const mcpSource = new McpToolSource({ config: { mcpServers: { shop: { url: mcpServer.url } } } });
  try {
    const report = await mcpSource.connect();
    check(report.connected[0]?.tools.join() === 'shop_pay', 'MCP tools listed: ' + JSON.stringify(report));
    const mcpCtx: McpToolContext | undefined = undefined;
    check(mcpCtx === undefined, 'mcp entry types');
  } finally {
    await mcpSource.close();
    await mcpServer.close();
  }
  console.log('consumer program: nested DTO, SQLite suspension resolved, Nest entry, MCP entry: ok');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;

const tsconfig = (compilerOptions) => ({
  compilerOptions: {
    target: 'ES2022',
    strict: true,
    skipLibCheck: false,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    types: ['node'],
    outDir: 'dist',
    ...compilerOptions,
  },
  include: ['src'],
});

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tnx-consumer-'));
  console.log(`== consumer test in ${tmp}`);
  try {
    // 1. The tarball, as `npm publish` would upload it (prepack builds dist/ afresh).
    const packed = await timed('npm pack (builds dist/)', async () =>
      JSON.parse(await run(NPM, ['pack', '--json', '--pack-destination', tmp, '--loglevel=error'], REPO)),
    );
    const tarball = path.join(tmp, packed[0].filename);
    const shipped = packed[0].files.map((file) => file.path);
    check(
      shipped.includes('LICENSE') && shipped.includes('dist/index.d.ts') && shipped.includes('dist/testing/index.js'),
      'tarball has LICENSE and every entry',
    );
    check(
      !shipped.some((file) => file.startsWith('test/') || file.startsWith('dist-examples/')),
      'tarball ships no tests or example builds',
    );
    // The README's links lead into docs/, and docs/ into examples/: both ship (test/package/published.test.ts checks every link).
    check(
      shipped.includes('docs/design.md') && shipped.includes('examples/quick-start.ts'),
      'tarball has the guides and the programs they link to',
    );
    for (const map of shipped.filter((file) => file.endsWith('.js.map'))) {
      const { sources } = JSON.parse(fs.readFileSync(path.join(REPO, map), 'utf8'));
      for (const source of sources) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(map), source));
        check(shipped.includes(target), `source map ${map} points at ${target}, which is shipped`);
      }
    }
    console.log(`   tarball: ${packed[0].filename}, ${shipped.length} files, ${(packed[0].size / 1024).toFixed(0)} kB`);
    fs.mkdirSync(path.join(tmp, 'unpacked'));
    await run('tar', ['-xzf', tarball, '-C', path.join(tmp, 'unpacked')], tmp);
    await require('./consumer-peers').checkPeersAndNest({ repo: REPO, tarball, tmp, run, timed }); // peers at @latest; Nest 11 and 12 apps

    // 2. The package alone (no optional peer, no native compile), beside the shared tools.
    const alone = path.join(tmp, 'alone');
    const apps = path.join(tmp, 'apps');
    write(alone, { 'package.json': { name: 'alone', private: true, version: '1.0.0' } });
    write(apps, { 'package.json': { name: 'apps', private: true, version: '1.0.0' } });
    // 12 compiles at install: its addon is copied from the cache folder. 13 ships its N-API build.
    const addon = path.join(SQLITE_PACKAGE, 'build', 'Release', 'better_sqlite3.node');
    const shared = [`better-sqlite3@${SQLITE_VERSION}`, ...Object.entries(DEV).map(([name, version]) => `${name}@${version}`)];
    await Promise.all([
      timed('npm install <tarball> alone (required peers only, no optional peer)', () => run(NPM, [...INSTALL, tarball], alone)),
      timed(`npm install shared tools (${shared.join(', ')}; --ignore-scripts)`, async () => {
        await run(NPM, [...INSTALL, '--ignore-scripts', ...shared], apps);
        if (!SQLITE_VERSION.startsWith('12.')) return;
        const target = path.join(apps, 'node_modules', 'better-sqlite3', 'build', 'Release');
        fs.mkdirSync(target, { recursive: true });
        if (fs.existsSync(addon)) fs.copyFileSync(addon, path.join(target, 'better_sqlite3.node'));
        else await timed('better-sqlite3 compiled from source', () => run(NPM, ['rebuild', 'better-sqlite3'], apps));
      }),
    ]);
    const aloneModules = fs.readdirSync(path.join(alone, 'node_modules'));
    check(
      !aloneModules.includes('better-sqlite3') &&
        !aloneModules.includes('pg') &&
        !aloneModules.includes('@modelcontextprotocol') &&
        !aloneModules.includes('ai') &&
        !aloneModules.includes('@openai') &&
        !aloneModules.includes('@langchain') &&
        !aloneModules.includes('nodemailer'),
      'no optional peer installed',
    );
    check(!aloneModules.includes('@opentelemetry'), 'no OpenTelemetry package installed (its api is an optional peer)');
    check(
      ['reflect-metadata', 'class-validator', 'class-transformer'].every((name) => aloneModules.includes(name)),
      'required peers installed with the package',
    );
    write(alone, {
      'check.js': `require('reflect-metadata');
const { MemoryStore } = require('toolnexus-ts/memory');
const { SqliteStore } = require('toolnexus-ts/sqlite');
const { PostgresStore } = require('toolnexus-ts/postgres');
const { StoreError } = require('toolnexus-ts/suspension');
new MemoryStore();
// Where Node.js has node:sqlite, SqliteStore needs nothing installed; better-sqlite3 only when asked for.
const hasNodeSqlite = typeof process.getBuiltinModule === 'function' && process.getBuiltinModule('node:sqlite') !== undefined;
if (hasNodeSqlite) {
  const builtIn = new SqliteStore(':memory:');
  if (builtIn.driver !== 'node:sqlite') throw new Error('SqliteStore did not choose node:sqlite');
  builtIn.close();
  console.log('SqliteStore on node:sqlite, nothing installed');
}
const sqliteInstall = Number(process.versions.node.split('.')[0]) < 22 ? 'npm install better-sqlite3@12' : 'npm install better-sqlite3';
const sqliteWithout = () => new SqliteStore(hasNodeSqlite ? { filename: ':memory:', driver: 'better-sqlite3' } : ':memory:');
for (const [build, command] of [[sqliteWithout, sqliteInstall], [() => new PostgresStore({ connectionString: 'postgres://x' }), 'npm install pg']]) {
  try { build(); throw new Error('built a store without its driver'); }
  catch (error) { if (!(error instanceof StoreError) || !error.message.includes(command)) throw error; console.log(error.message); }
}
// The framework adapters' entries, without their optional peers: a typed error naming the install command.
for (const [entry, command] of [['toolnexus-ts/ai-sdk', 'npm install ai'], ['toolnexus-ts/openai-agents', 'npm install @openai/agents'], ['toolnexus-ts/langchain', 'npm install @langchain/core @langchain/langgraph']]) {
  try { require(entry); throw new Error(entry + ' loaded without its peer'); }
  catch (error) { if (error.code !== 'TOOLNEXUS_MISSING_PEER' || !error.message.includes(command)) throw error; console.log(error.message); }
}
// Without @opentelemetry/api, a telemetry option changes nothing and a suspension still resumes.
const { Toolkit, defineTool, pending } = require('toolnexus-ts');
const { ResumeCoordinator } = require('toolnexus-ts/suspension');
const pay = defineTool({ name: 'pay', description: 'Pays', inputSchema: { type: 'object' }, run: (_a, ctx) => (ctx && ctx.answer ? 'paid' : pending({ kind: 'approval', prompt: 'Pay?' })) });
const coordinator = new ResumeCoordinator({ toolkit: new Toolkit({ telemetry: { captureContent: true } }).register(pay) });
coordinator.execute('pay', {}).then((first) => coordinator.resolve({ id: first.metadata.pending.id, ok: true })).then((outcome) => {
  if (outcome.output !== 'paid') throw new Error('the suspension did not resume');
  console.log('suspended and resumed without @opentelemetry/api');
});
`,
    });
    await run(process.execPath, ['check.js'], alone, { show: true });
    // The `toolnexus-ts` command: linked into .bin, executable, its shebang and requires intact.
    const help = await run(path.join(alone, 'node_modules', '.bin', 'toolnexus-ts'), ['--help'], alone);
    check(help.includes('pending approve ID'), 'the toolnexus-ts command prints its help');

    // 3. The typed apps, in parallel.
    const variants = [
      { name: 'node10', type: 'commonjs', compilerOptions: { module: 'commonjs', moduleResolution: 'node10' }, install: [tarball] },
      {
        name: 'nodenext',
        type: 'module',
        compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' },
        // The same sources as a bundler would see them: type-checked only.
        alsoCheck: { module: 'esnext', moduleResolution: 'bundler' },
        install: [tarball],
      },
      {
        name: 'folder',
        type: 'commonjs',
        compilerOptions: { module: 'commonjs', moduleResolution: 'node10' },
        install: ['--install-links', path.join(tmp, 'unpacked', 'package')],
      },
    ];
    const tsc = path.join(apps, 'node_modules', 'typescript', 'bin', 'tsc');
    await Promise.all(
      variants.map(async (variant) => {
        const dir = path.join(apps, variant.name);
        write(dir, {
          'package.json': { name: `app-${variant.name}`, private: true, version: '1.0.0', type: variant.type },
          'tsconfig.json': tsconfig(variant.compilerOptions),
          'src/main.ts': PROGRAM,
        });
        await timed(`${variant.name}: npm install ${variant.install.join(' ').replace(tmp, '<tmp>')}`, () =>
          run(NPM, [...INSTALL, ...variant.install], dir),
        );
        check(
          !fs.existsSync(path.join(dir, 'node_modules', '@types', 'pg')) && !fs.existsSync(path.join(apps, 'node_modules', '@types', 'pg')),
          'no @types/pg',
        );
        // tsc type-checks everything (strict, skipLibCheck false) before it emits; an error fails the run.
        await timed(`${variant.name}: tsc (${variant.compilerOptions.moduleResolution}, strict, skipLibCheck false)`, () =>
          run(process.execPath, [tsc, '-p', dir], dir),
        );
        if (variant.alsoCheck) {
          write(dir, { 'tsconfig.also.json': tsconfig({ ...variant.alsoCheck, noEmit: true }) });
          await timed(`${variant.name}: tsc --noEmit (${variant.alsoCheck.moduleResolution}, strict, skipLibCheck false)`, () =>
            run(process.execPath, [tsc, '-p', path.join(dir, 'tsconfig.also.json')], dir),
          );
        }
        await timed(`${variant.name}: run the program`, () =>
          run(process.execPath, [path.join(dir, 'dist', 'main.js')], dir, { show: true }),
        );
        const ls = JSON.parse(await run(NPM, ['ls', 'class-validator', 'class-transformer', 'reflect-metadata', '--all', '--json'], dir));
        const copies = {};
        (function walk(node) {
          for (const [name, child] of Object.entries(node.dependencies ?? {})) {
            if (['class-validator', 'class-transformer', 'reflect-metadata'].includes(name))
              (copies[name] ??= new Set()).add(child.version + (child.resolved ?? ''));
            walk(child);
          }
        })(ls);
        for (const name of ['class-validator', 'class-transformer'])
          check(copies[name]?.size === 1, `${variant.name}: one copy of ${name}, found ${copies[name]?.size ?? 0}`);
        console.log(
          `   ${variant.name}: npm ls: ${Object.entries(copies)
            .map(([name, set]) => `${name} x${set.size}`)
            .join(', ')}`,
        );
      }),
    );
    await require('./consumer-typescript').compileUserApp({ apps, tarball, tmp, run, timed, check, write }); // TypeScript 5.9 and 7
  } finally {
    if (process.env.KEEP) console.log(`   kept ${tmp}`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`== consumer test passed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
