/**
 * What importing the root entry loads, pinned by the modules it loads rather than by a
 * timing: the root is the tools layer, so `require('toolnexus-ts')` loads the tools layer's
 * folders and nothing else, from the sources (in a child process through register-ts.js) and
 * from a build of the package imported by a real ESM program (docs/design.md, "Entries").
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild } from '../fixtures/children';

const ROOT = join(__dirname, '..', '..');

/** The tools layer: the folders below the suspension layer (docs/design.md, "Layers"), and the root entry itself. */
const TOOLS_LAYER = /^(index\.[jt]s|(errors|results|timing|metadata|telemetry|decorators|schema|toolkit)\/[^/]+\.[jt]s)$/;
/** The upper layers' folders, each named so a failure says which one leaked into the root. */
const UPPER = [
  'suspension/',
  'http/',
  'models/',
  'sessions/',
  'runner/',
  'stores/',
  'webhooks/',
  'inbox/',
  'chat/',
  'mcp/',
  'cli/',
  'nest/',
  'adapters/',
  'testing/',
];
const PEERS = ['class-transformer', 'class-transformer/cjs/storage', 'class-validator', 'reflect-metadata'];

interface Snapshot {
  modules: string[];
  requested: string[];
}

describe("require('toolnexus-ts'), from the sources", () => {
  let report: { atImport: Snapshot; firstCall: { output: string; isError: boolean }; afterFirstCall: Snapshot };

  beforeAll(async () => {
    const done = await startChild('root-loads.ts', []).exited;
    if (done.code !== 0) throw new Error(`root-loads.ts failed (${done.code}):\n${done.stderr}`);
    report = JSON.parse(done.stdout) as typeof report;
  }, 180_000); // a cold child transpiles the root's sources first; generous for a loaded machine

  it('loads only modules of the tools layer folders', () => {
    expect(report.atImport.modules).toContain('toolkit/toolkit.ts');
    expect(report.atImport.modules.filter((file) => !TOOLS_LAYER.test(file))).toEqual([]);
  });

  it('asks for no node builtin and no package but the three mandatory peers', () => {
    expect(report.atImport.requested).toEqual(PEERS);
  });

  it('a first Toolkit call loads no further module of the library (only the optional telemetry peer, looked for per call)', () => {
    expect(report.firstCall).toEqual({ output: '5', isError: false });
    expect(report.afterFirstCall.modules).toEqual(report.atImport.modules);
    expect(report.afterFirstCall.requested.filter((name) => !PEERS.includes(name))).toEqual(['@opentelemetry/api']);
  });
});

describe("import { Toolkit } from 'toolnexus-ts', in an ESM program against a build of the package", () => {
  let dir: string;
  let loaded: { output: string; modules: string[] };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tnx-root-esm-'));
    const modules = join(dir, 'node_modules');
    const pkg = join(modules, 'toolnexus-ts');
    mkdirSync(pkg, { recursive: true });
    // The package as npm installs it: package.json and dist/, from tsconfig.build.json (no maps or declarations: not loaded).
    execFileSync(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'typescript-7', 'bin', 'tsc'),
        ...['-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(pkg, 'dist')],
        ...['--declaration', 'false', '--declarationMap', 'false', '--sourceMap', 'false'],
      ],
      { cwd: ROOT, stdio: 'pipe' },
    );
    copyFileSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
    for (const peer of ['reflect-metadata', 'class-validator', 'class-transformer']) {
      symlinkSync(join(ROOT, 'node_modules', peer), join(modules, peer), 'dir');
    }
    // The CommonJS modules an ESM import loads are in the one module cache, which createRequire reads.
    writeFileSync(
      join(dir, 'main.mjs'),
      `import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Toolkit, defineTool } from 'toolnexus-ts';

const require = createRequire(import.meta.url);
const toolkit = new Toolkit().register(defineTool({ name: 'echo', description: 'Echoes', inputSchema: { type: 'object' }, run: (args) => args }));
const result = await toolkit.execute('echo', { said: 'hi' });
const dist = fileURLToPath(new URL('./node_modules/toolnexus-ts/dist/', import.meta.url));
const modules = Object.keys(require.cache).filter((file) => file.startsWith(dist)).map((file) => file.slice(dist.length).split('\\\\').join('/'));
process.stdout.write(JSON.stringify({ output: result.output, modules: modules.sort() }));
`,
    );
    loaded = JSON.parse(execFileSync(process.execPath, [join(dir, 'main.mjs')], { cwd: dir, encoding: 'utf8' })) as typeof loaded;
  }, 240_000); // a full tsc build of the package; generous for a loaded machine

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs a tool', () => {
    expect(loaded.output).toBe('{"said":"hi"}');
  });

  it('loads no runner, models, stores, mcp, inbox, chat, cli, nest or adapter module: only the tools layer', () => {
    expect(loaded.modules).toContain('index.js');
    for (const folder of UPPER) expect(loaded.modules.filter((file) => file.startsWith(folder))).toEqual([]);
    expect(loaded.modules.filter((file) => !TOOLS_LAYER.test(file))).toEqual([]);
  });
});
