/**
 * The user app under both compilers a user may have (part of `npm run test:consumer`):
 * TypeScript 5.9 and TypeScript 7, each in four resolution modes, every one `strict` with
 * `skipLibCheck: false`:
 *
 *   node16    `module`/`moduleResolution: node16` in a CommonJS package (the exports map),
 *             without the Nest parts and the A2A entry (whose SDK's types are ES modules only): NestJS 12 ships ES modules only, which a CommonJS app may
 *             require() only under `module: nodenext` (or `node20`), so `node16` cannot import it;
 *   nodenext-cjs  `module`/`moduleResolution: nodenext` in a CommonJS package, Nest included;
 *   nodenext  `module`/`moduleResolution: nodenext` in an ESM package (`"type": "module"`);
 *   bundler   `module: preserve`, `moduleResolution: bundler` (type-checked only, as a bundler's app);
 *   default   `module: commonjs`, no `moduleResolution`: each compiler's own default, which is
 *             `node10` (typesVersions) for 5.9 and `bundler` for 7 (7 removed `node10`);
 *   node10    `module: commonjs`, `moduleResolution: node10` named (typesVersions): 5.9 only.
 *             TypeScript 7 refuses the option (TS5108), which is checked too: the README
 *             says which compilers take which modes, and this keeps it true.
 *
 * The app is what the docs tell a user to write: the README's quick start and the docs' Nest
 * module (docs/dependency-injection.md), taken from the docs as they stand; DTOs with nested,
 * optional, enum and array fields (class-validator, `experimentalDecorators` +
 * `emitDecoratorMetadata`); and a type-only import of every entry in the packed package.json's
 * "exports", with the optional peers those entries' types name installed. Each emitted build
 * then runs, and its output must equal the others': the schemas come from decorator metadata,
 * so a compiler that emitted it differently would show here. Installed into the scratch app:
 * the tarball, `typescript@7` (as `typescript-7`, the version the repository builds with) and
 * the adapters' peers; TypeScript 5.9, Nest and @types/node come from the shared folder.
 */
'use strict';
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const REPO = path.resolve(__dirname, '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

const versionOf = (name) => JSON.parse(fs.readFileSync(path.join(REPO, 'node_modules', name, 'package.json'), 'utf8')).version;

/** The resolution modes: where the sources sit (`esm` is a `"type": "module"` folder) and whether they emit. */
const MODES = [
  { name: 'node16', folder: 'cjs-node16', options: { module: 'node16', moduleResolution: 'node16' }, emit: true, nest: false },
  { name: 'nodenext-cjs', folder: '.', options: { module: 'nodenext', moduleResolution: 'nodenext' }, emit: true },
  { name: 'nodenext', folder: 'esm', options: { module: 'nodenext', moduleResolution: 'nodenext' }, emit: true },
  { name: 'bundler', folder: '.', options: { module: 'preserve', moduleResolution: 'bundler' }, emit: false },
  { name: 'default', folder: '.', options: { module: 'commonjs' }, emit: true },
  { name: 'node10', folder: '.', options: { module: 'commonjs', moduleResolution: 'node10' }, emit: true, compilers: ['5.9'] },
];

/** Where an error of tsc's output sits: `file(line,col): error TSnnnn`. */
const ERROR_LINE = /^(\S[^(]*)\(\d+,\d+\): error TS\d+/;
const PACKAGE_OF = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//;

/**
 * Runs tsc. An error in the app's sources or in toolnexus-ts's declarations fails the test; an
 * error inside another package's own declarations (an optional peer's, seen because
 * `skipLibCheck` is off) is not ours to fix and is returned as a summary instead, so that it is
 * seen without hiding ours. Anything else tsc prints on failure (a config error) fails.
 */
function compile(tsc, config, cwd) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [tsc, '-p', config], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolve('');
      const peers = new Map();
      const ours = [];
      for (const line of stdout.split('\n').filter((text) => text !== '' && !text.startsWith(' ') && !/^Found \d+ errors?/.test(text))) {
        const file = ERROR_LINE.exec(line)?.[1];
        const owner = file === undefined ? undefined : PACKAGE_OF.exec(file)?.[1];
        if (owner === undefined || owner === 'toolnexus-ts') ours.push(line);
        else peers.set(owner, (peers.get(owner) ?? 0) + 1);
      }
      if (ours.length > 0 || peers.size === 0) {
        process.stderr.write(`\n$ tsc -p ${config}\n${stdout}${stderr}\n`);
        return reject(new Error(`consumer test: tsc -p ${config} failed`));
      }
      resolve(
        `errors in peers' own declarations (not toolnexus-ts's): ${[...peers].map(([name, count]) => `${name} ${count}`).join(', ')}`,
      );
    });
  });
}

/** A fenced ```ts block of a doc, found by what it contains, so the test follows the docs' edits. */
function docBlock(file, marker) {
  const text = fs.readFileSync(path.join(REPO, file), 'utf8');
  const block = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]).find((code) => code.includes(marker));
  if (block === undefined) throw new Error(`consumer test: no \`\`\`ts block with ${JSON.stringify(marker)} in ${file}`);
  return block;
}

/** DTOs beyond the quick start's: nested, array, enum, optional. */
const DTOS = `import { Type } from 'class-transformer';
import { ArrayMaxSize, IsEnum, IsInt, IsOptional, IsString, Min, ValidateNested } from 'class-validator';
import { Describe, Tool, Toolkit, success } from 'toolnexus-ts';

export enum Priority {
  Low = 'low',
  High = 'high',
}

export class OrderLine {
  @IsString() @Describe('What is bought') item!: string;
  @IsInt() @Min(1) quantity!: number;
}

export class OrderArgs {
  @IsString() @Describe('Who orders') customer!: string;
  @ValidateNested({ each: true }) @Type(() => OrderLine) @ArrayMaxSize(10) lines!: OrderLine[];
  @IsOptional() @IsEnum(Priority) priority?: Priority;
  @IsOptional() @IsString() @Describe('A note for the courier') note?: string;
}

@Tool({ description: 'Place an order', args: OrderArgs })
export class OrderTool {
  run(args: OrderArgs) {
    return success({ lines: args.lines.length, nested: args.lines.every((line) => line instanceof OrderLine), priority: args.priority ?? 'none' });
  }
}

export async function orders(): Promise<string[]> {
  const toolkit = new Toolkit().register(OrderTool);
  const good = await toolkit.execute('order', { customer: 'Ada', lines: [{ item: 'tea', quantity: 2 }], priority: 'high' });
  const bad = await toolkit.execute('order', { customer: 'Ada', lines: [{ item: 'tea', quantity: 0 }], note: 7 });
  return [JSON.stringify(toolkit.toOpenAI()), JSON.stringify(good), JSON.stringify(bad)];
}
`;

/** A type-only import of every published entry (but `skip`), used so that each is resolved and checked. */
function entriesSource(exportsMap, skip = []) {
  const entries = Object.keys(exportsMap)
    // JSON exports (package.json, the decision row's schema) are data, not entries with declarations.
    .filter((key) => !key.endsWith('.json') && !skip.includes(key))
    .map((key) => (key === '.' ? 'toolnexus-ts' : `toolnexus-ts/${key.slice(2)}`));
  const lines = entries.map((entry, i) => `import type * as entry${i} from '${entry}';`);
  lines.push(`export type Entries = [${entries.map((_, i) => `typeof entry${i}`).join(', ')}];`);
  lines.push(`export const ENTRIES = ${JSON.stringify(entries)};`);
  return { source: `${lines.join('\n')}\n`, entries };
}

const MAIN = `import 'reflect-metadata';
import { orders } from './dtos.js';
import { ENTRIES, type Entries } from './entries.js';
import { main as nestModule } from './nest-module.js';

const typed: Entries | undefined = undefined;

async function run(): Promise<void> {
  for (const line of await orders()) console.log(line);
  await nestModule();
  console.log(\`entries typed: \${typed === undefined ? ENTRIES.length : 'none'}\`);
}

run().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
`;

/** A mode a compiler no longer takes: its tsc must refuse the option itself (TS5108), not fail on the app. */
async function refused(compiler, mode, folder, write, check) {
  const config = `tsconfig.${compiler.name}.${mode.name}.json`;
  write(folder, { [config]: { compilerOptions: { strict: true, noEmit: true, ...mode.options }, include: ['src'] } });
  const output = await new Promise((resolve) => {
    execFile(process.execPath, [compiler.tsc, '-p', path.join(folder, config)], { cwd: folder, encoding: 'utf8' }, (error, stdout) =>
      resolve(error ? stdout : ''),
    );
  });
  check(
    output.includes(`error TS5108: Option 'moduleResolution=${mode.options.moduleResolution}' has been removed`),
    `TypeScript ${compiler.version} refuses ${mode.name} with TS5108, as the README says: ${output || 'it compiled'}`,
  );
  console.log(`   user app: TypeScript ${compiler.version}, ${mode.name}: refused (TS5108), as the README says`);
}

/**
 * Builds the user app with both compilers in every mode and runs each emitted build.
 * `helpers` are the consumer test's own (`run`, `timed`, `check`, `write`).
 */
async function compileUserApp({ apps, tarball, tmp, run, timed, check, write }) {
  const dir = path.join(apps, 'user-app');
  const quickStart = docBlock('README.md', "toolkit.execute('transfer'");
  const nestDoc = docBlock('docs/dependency-injection.md', 'ToolnexusModule.forRoot({ model })');
  // The docs' module runs itself under CommonJS; here main.ts calls it, in CommonJS and ESM alike.
  const selfStart = 'if (require.main === module) void main();';
  check(nestDoc.includes(selfStart), `the docs' Nest module still ends with \`${selfStart}\``);
  const packed = JSON.parse(fs.readFileSync(path.join(tmp, 'unpacked', 'package', 'package.json'), 'utf8'));
  const { source: entries, entries: entryNames } = entriesSource(packed.exports);
  const sources = {
    'src/quick-start.ts': quickStart,
    'src/nest-module.ts': nestDoc.replace(selfStart, ''),
    'src/dtos.ts': DTOS,
    'src/entries.ts': entries,
    'src/main.ts': MAIN,
  };
  write(dir, { 'package.json': { name: 'user-app', private: true, version: '1.0.0', type: 'commonjs' }, ...sources });
  // Without Nest and A2A: NestJS 12 is ES modules only, and @a2a-js/sdk's declarations are
  // ES modules only (its exports map has no CommonJS types), which `module: node16` cannot require().
  const NODE16_SKIPPED = ['./nest', './a2a'];
  write(path.join(dir, 'cjs-node16'), {
    'package.json': { name: 'user-app-node16', private: true, version: '1.0.0', type: 'commonjs' },
    'src/quick-start.ts': sources['src/quick-start.ts'],
    'src/dtos.ts': DTOS,
    'src/entries.ts': entriesSource(packed.exports, NODE16_SKIPPED).source,
    'src/main.ts': MAIN.replace("import { main as nestModule } from './nest-module.js';\n", '').replace('  await nestModule();\n', ''),
  });
  write(path.join(dir, 'esm'), { 'package.json': { name: 'user-app-esm', private: true, version: '1.0.0', type: 'module' }, ...sources });

  const ts7 = versionOf('typescript-7');
  // The optional peers the adapters', the A2A and the DBOS entries' declarations import; the shared folder has Nest and the MCP SDK.
  const peers = ['ai', '@openai/agents', 'zod', '@langchain/core', '@langchain/langgraph', '@dbos-inc/dbos-sdk', '@a2a-js/sdk'].map(
    (name) => `${name}@${versionOf(name)}`,
  );
  await timed(`user app: npm install <tarball> typescript@${ts7} (as typescript-7) ${peers.join(' ')}`, () =>
    run(NPM, [...INSTALL, tarball, `typescript-7@npm:typescript@${ts7}`, ...peers], dir),
  );
  const compilers = [
    { name: `5.9`, tsc: path.join(apps, 'node_modules', 'typescript', 'bin', 'tsc') },
    { name: `7`, tsc: path.join(dir, 'node_modules', 'typescript-7', 'bin', 'tsc') },
  ];
  for (const compiler of compilers) {
    const version = (await run(process.execPath, [compiler.tsc, '--version'], dir)).trim();
    check(version.startsWith(`Version ${compiler.name}.`), `TypeScript ${compiler.name} is ${version}`);
    compiler.version = version.replace('Version ', '');
  }

  // One chain of compiles per compiler, side by side: 7's take a second, 5.9's most of the time.
  const outputs = [];
  await Promise.all(
    compilers.map(async (compiler) => {
      for (const mode of MODES) {
        if (mode.compilers && !mode.compilers.includes(compiler.name)) {
          await refused(compiler, mode, path.join(dir, mode.folder), write, check);
          continue;
        }
        const folder = path.join(dir, mode.folder);
        const outDir = `dist-${compiler.name}-${mode.name}`;
        const config = `tsconfig.${compiler.name}.${mode.name}.json`;
        write(folder, {
          [config]: {
            compilerOptions: {
              target: 'ES2022',
              strict: true,
              skipLibCheck: false,
              experimentalDecorators: true,
              emitDecoratorMetadata: true,
              types: ['node'],
              outDir,
              rootDir: 'src',
              ...(mode.emit ? {} : { noEmit: true }),
              ...mode.options,
            },
            include: ['src'],
          },
        });
        const peerErrors = await timed(`user app: TypeScript ${compiler.version}, ${mode.name} (${JSON.stringify(mode.options)})`, () =>
          compile(compiler.tsc, path.join(folder, config), folder),
        );
        if (peerErrors !== '') console.log(`   user app: TypeScript ${compiler.version}, ${mode.name}: ${peerErrors}`);
        if (!mode.emit) continue;
        const main = await run(process.execPath, [path.join(folder, outDir, 'main.js')], folder);
        const quick = await run(process.execPath, [path.join(folder, outDir, 'quick-start.js')], folder);
        outputs.push({ label: `${compiler.name} ${mode.name}`, text: `${quick}${main}`, nest: mode.nest !== false });
      }
    }),
  );

  // Every build prints the same: schemas from decorator metadata, validation, Nest's injection.
  // Compared with a build that has Nest; the chains ran side by side, so any may have finished first.
  const first = outputs.find((output) => output.nest);
  const rest = outputs.filter((output) => output !== first);
  check(first.text.includes('"name":"transfer"') && first.text.includes('Transfer 5 from a?'), `the quick start ran: ${first.text}`);
  check(
    first.text.includes('halted: Transfer 500 from acc-1?') && first.text.includes('done: Done: moved 500'),
    `the Nest module ran: ${first.text}`,
  );
  check(
    first.text.includes('\\"nested\\":true') && first.text.includes('\\"priority\\":\\"high') && /lines\.0\.quantity/.test(first.text),
    `the order DTOs validated, nested lines as instances: ${first.text}`,
  );
  check(first.text.includes(`entries typed: ${entryNames.length}`), `every entry typed: ${first.text}`);
  // A build without Nest prints the same but the Nest module's two lines, and one entry fewer.
  const withoutNest = first.text
    .split('\n')
    .filter((line) => !/^(halted|done): /.test(line))
    .join('\n')
    .replace(`entries typed: ${entryNames.length}`, `entries typed: ${entryNames.length - NODE16_SKIPPED.length}`);
  for (const other of rest) {
    const expected = other.nest ? first.text : withoutNest;
    check(other.text === expected, `${other.label} printed what ${first.label} printed:\n${other.text}\n---\n${expected}`);
  }
  console.log(
    `   user app: TypeScript ${compilers.map((c) => c.version).join(' and ')}, modes ${MODES.map((m) => m.name).join(', ')}; ` +
      `${entryNames.length} entries typed; ${outputs.length} builds ran alike`,
  );
}

module.exports = { compileUserApp };
