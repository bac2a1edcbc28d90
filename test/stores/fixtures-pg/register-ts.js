// Lets a plain `node` child process (a worker in the cross-process tests and the benchmark
// fixtures) require the project's TypeScript sources directly, the way ts-jest does in the
// test process: transpile-only, with the project's decorator settings.
'use strict';
const fs = require('node:fs');
const ts = require('typescript');

const compilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.CommonJS,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  sourceMap: false,
  inlineSourceMap: true,
};

require.extensions['.ts'] = function compileTypeScript(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};
