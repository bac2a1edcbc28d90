/**
 * Issue 26, the root entry's import cost, pinned by what it loads rather than by a timing: in
 * a child process, importing `toolnexus-ts` loads the Toolkit's path and nothing else (no
 * runner, coordinator, store, webhooks; no node builtin; no package but the three mandatory
 * peers), a first Toolkit call loads nothing more, and every lazy name, when read, is its
 * home module's own export and works. The names keep their kind for the compiler: a lazy
 * class is still the class it was (docs/design.md, "Entries"; CONTRIBUTING.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { startChild } from '../fixtures/children';

const ROOT = join(__dirname, '..', '..');

interface Snapshot {
  modules: string[];
  requested: string[];
}
interface Report {
  atImport: Snapshot;
  firstCall: { output: string; isError: boolean };
  afterFirstCall: Snapshot;
  lazy: Array<{ name: string; from: string; kind: string; same: boolean }>;
  runtimeNames: string[];
  afterTouch: Snapshot;
  run: { status: string; text: string; outputs: string[] };
  suspension: { kind?: string; output?: string; storeIsEntryClass: boolean };
  verified: boolean;
}

/** Folders of src/ a first Toolkit call needs; everything else the root exports is lazy. */
const EAGER = /^(index\.ts|root-lazy\.js|(results|errors|decorators|metadata|schema|toolkit|timing|telemetry)\/[^/]+\.ts)$/;
const PEERS = ['class-transformer', 'class-transformer/cjs/storage', 'class-validator', 'reflect-metadata'];

let report: Report;

beforeAll(async () => {
  const done = await startChild('root-loads.ts', []).exited;
  if (done.code !== 0) throw new Error(`root-loads.ts failed (${done.code}):\n${done.stderr}`);
  report = JSON.parse(done.stdout) as Report;
}, 180_000); // a cold child transpiles the root's sources first; generous for a loaded machine

/** The names src/root-lazy.d.ts re-exports, with the module each comes from. */
function declaredLazy(): Array<{ name: string; from: string }> {
  const text = readFileSync(join(ROOT, 'src', 'root-lazy.d.ts'), 'utf8');
  return [...text.matchAll(/export \{([^}]+)\} from '([^']+)';/g)].flatMap(([, names, from]) =>
    (names as string).split(',').map((name) => ({ name: name.trim(), from: from as string })),
  );
}

describe('importing the root entry', () => {
  it('loads only the Toolkit path of the library: no runner, coordinator, store, webhooks or context module', () => {
    expect(report.atImport.modules.filter((file) => !EAGER.test(file))).toEqual([]);
    for (const lazyFolder of ['runner/', 'suspension/', 'webhooks/', 'sqlite/', 'postgres/', 'sessions/', 'context/', 'root-stores']) {
      expect(report.atImport.modules.filter((file) => file.startsWith(lazyFolder))).toEqual([]);
    }
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

describe('the lazy names', () => {
  it('root-lazy.js defines exactly the names root-lazy.d.ts declares', () => {
    expect(report.runtimeNames).toEqual(
      declaredLazy()
        .map(({ name }) => name)
        .sort(),
    );
  });

  it('each, when read, is the export of the module root-lazy.d.ts names, now loaded', () => {
    expect(report.lazy.map(({ name, from }) => ({ name, from }))).toEqual(declaredLazy());
    expect(report.lazy.filter((entry) => !entry.same)).toEqual([]);
    expect(report.afterTouch.modules).toEqual(
      expect.arrayContaining([
        'runner/agent-runner.ts',
        'runner/models/openai.ts',
        'suspension/stores/sqlite/store.ts',
        'webhooks/webhooks.ts',
      ]),
    );
  });

  it('work: a run over HTTP with OpenAIChatModel, a suspension kept in SQLite, a webhook signature', () => {
    expect(report.run).toEqual({ status: 'done', text: 'It is 42.', outputs: ['42'] });
    expect(report.suspension).toEqual({ kind: 'approval', output: 'approved', storeIsEntryClass: true });
    expect(report.verified).toBe(true);
  });

  it('keep their kind for the compiler: the root name is the very declaration of its home module (a class stays a class)', () => {
    const program = ts.createProgram([join(ROOT, 'src', 'index.ts')], {
      strict: true,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      types: ['node'],
      noEmit: true,
    });
    const checker = program.getTypeChecker();
    const exportsOf = (file: string) => {
      const source = program.getSourceFile(file);
      const module = source && checker.getSymbolAtLocation(source);
      if (!module) throw new Error(`no module for ${file}`);
      const resolve = (symbol: ts.Symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
      return new Map(checker.getExportsOfModule(module).map((symbol) => [symbol.name, resolve(symbol)]));
    };
    const root = exportsOf(join(ROOT, 'src', 'index.ts'));
    const classes: string[] = [];
    for (const { name, from } of declaredLazy()) {
      const home = exportsOf(join(ROOT, 'src', `${from}.ts`)).get(name);
      expect({ name, same: root.get(name) === home }).toEqual({ name, same: true });
      if (home && home.flags & ts.SymbolFlags.Class) classes.push(name);
    }
    expect(classes).toEqual(
      expect.arrayContaining(['AgentRunner', 'OpenAIChatModel', 'ResumeCoordinator', 'MemoryStore', 'Webhooks', 'SubAgentTool']),
    );
  }, 180_000); // type-checks the whole root: seconds, more on a loaded machine
});
