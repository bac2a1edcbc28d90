/**
 * Runs every complete program in docs/agents.md (the blocks that export `main`) against
 * the sources, type-checks them strictly, and checks that each prints what its `// →`
 * comments say, in order.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';

const root = join(__dirname, '..', '..');
const page = readFileSync(join(root, 'docs', 'agents.md'), 'utf8');
const programs = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string).filter((code) => code.includes('export async function main'));

function load(code: string): { main(): Promise<void> } {
  const js = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, experimentalDecorators: true, emitDecoratorMetadata: true, esModuleInterop: true },
  }).outputText;
  const module = { exports: {} as { main(): Promise<void> } };
  const localRequire = (id: string): unknown => require(id === 'toolnexus-ts' ? join(root, 'src') : id);
  new Function('require', 'module', 'exports', js)(localRequire, module, module.exports);
  return module.exports;
}

function typeErrors(): string[] {
  const files = new Map(programs.map((code, i) => [join(root, 'test', 'runner', `__agents_doc_${i}.ts`), code]));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true, experimentalDecorators: true, emitDecoratorMetadata: true, esModuleInterop: true, skipLibCheck: true,
    noEmit: true, types: ['node'], baseUrl: root, paths: { 'toolnexus-ts': ['src/index.ts'] },
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
    .map((d) => `program ${[...files.keys()].indexOf(d.file?.fileName ?? '')}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('docs/agents.md', () => {
  it('has runnable programs for the loop, streaming, waitFor and the durable halt', () => {
    expect(programs).toHaveLength(4);
  });

  it('its programs type-check under strict settings', () => {
    expect(typeErrors()).toEqual([]);
  });

  it.each(programs.map((code, i) => [i, code] as const))('program %i prints what the page says', async (_i, code) => {
    const expected = [...code.matchAll(/\/\/ → (.*)$/gm)].map((m) => m[1]);
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
