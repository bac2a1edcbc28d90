// Lets a plain `node` child process (a worker in the cross-process tests and the benchmark
// fixtures) require the project's TypeScript sources directly, the way ts-jest does in the
// test process: transpile-only, with the project's decorator settings.
//
// Transpiled files are cached on disk by content hash, and `typescript` itself is loaded
// only on a miss: eight workers starting at once on a 2-core machine would otherwise spend
// seconds each compiling the same files.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const cacheDir = path.join(os.tmpdir(), `toolnexus-ts-transpiled-${process.getuid ? process.getuid() : 'user'}`);
let ts;

function transpile(source, filename) {
  ts ??= require('typescript');
  const compilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    inlineSourceMap: true,
  };
  return ts.transpileModule(source, { compilerOptions, fileName: filename }).outputText;
}

require.extensions['.ts'] = function compileTypeScript(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const key = crypto.createHash('sha256').update(filename).update('\0').update(source).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  let output;
  try {
    output = fs.readFileSync(cached, 'utf8');
  } catch {
    output = transpile(source, filename);
    try {
      fs.mkdirSync(cacheDir, { recursive: true });
      // Written under a unique name, then renamed: a concurrent reader never sees half a file.
      const partial = `${cached}.${process.pid}.tmp`;
      fs.writeFileSync(partial, output);
      fs.renameSync(partial, cached);
    } catch {
      // A read-only temp dir only costs speed.
    }
  }
  module._compile(output, filename);
};
