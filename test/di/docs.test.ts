import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';

/**
 * Runs every complete program in docs/dependency-injection.md (the blocks that export
 * `main`) against the sources, and checks that it prints the lines marked `// →`.
 */
const root = join(__dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'dependency-injection.md'), 'utf8');
const programs = [...doc.matchAll(/^## (.+)$|```ts\n([\s\S]*?)```/gm)].reduce<Array<{ section: string; code: string }>>((found, match) => {
  if (match[1]) found.push({ section: match[1], code: '' });
  else if (match[2]?.includes('export async function main') && found.length > 0) found[found.length - 1].code = match[2];
  return found;
}, []).filter((p) => p.code !== '');

const packages: Record<string, string> = {
  'toolnexus-ts': join(root, 'src'),
  'toolnexus-ts/nest': join(root, 'src', 'nest'),
};

function load(code: string): { main(): Promise<void> } {
  const js = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, experimentalDecorators: true, emitDecoratorMetadata: true, esModuleInterop: true },
  }).outputText;
  const module = { exports: {} as { main(): Promise<void> } };
  const localRequire = (id: string): unknown => require(packages[id] ?? id);
  new Function('require', 'module', 'exports', js)(localRequire, module, module.exports);
  return module.exports;
}

/** Type-checks the programs as a user's project would, with the package mapped to the sources. */
function typeErrors(): string[] {
  const files = new Map(programs.map((p, i) => [join(root, 'test', 'di', `__doc_program_${i}.ts`), p.code]));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true, experimentalDecorators: true, emitDecoratorMetadata: true, esModuleInterop: true, skipLibCheck: true,
    noEmit: true, types: ['node'], baseUrl: root, paths: { 'toolnexus-ts': ['src/index.ts'], 'toolnexus-ts/*': ['src/*'] },
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.fileExists = (file) => files.has(file) || ts.sys.fileExists(file);
  host.readFile = (file) => files.get(file) ?? readFile(file);
  host.getSourceFile = (file, language) => {
    const text = files.get(file);
    return text === undefined ? getSourceFile(file, language) : ts.createSourceFile(file, text, language);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file && files.has(d.file.fileName))
    .map((d) => `${programs[[...files.keys()].indexOf(d.file?.fileName ?? '')]?.section}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('docs/dependency-injection.md', () => {
  it('its programs type-check under strict settings', () => {
    expect(typeErrors()).toEqual([]);
  });

  it('has a runnable program for the plain resolver, tsyringe, InversifyJS and NestJS', () => {
    expect(programs.map((p) => p.section)).toEqual(expect.arrayContaining(['The plain resolver', 'tsyringe', 'InversifyJS', 'NestJS']));
  });

  it.each(programs.map((p) => [p.section, p.code] as const))('%s: the program prints what the page says', async (_section, code) => {
    const expected = [...code.matchAll(/^\s*\/\/ → (.*)$/gm)].map((m) => m[1]);
    expect(expected.length).toBeGreaterThan(0);
    const printed: string[] = [];
    const log = jest.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => {
      printed.push(parts.map(String).join(' '));
    });
    try {
      await load(code).main();
    } finally {
      log.mockRestore();
    }
    expect(printed).toEqual(expected);
  });
});
