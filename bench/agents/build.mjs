// Compiles the TypeScript adapters (decorators need tsc) with the repository's own
// TypeScript, against the built library in ../../dist. The AgentRunner adapter is compiled
// only when dist exports AgentRunner; otherwise its row is left out, and the run says so.
import { createRequire } from 'node:module';
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const require = createRequire(import.meta.url);

const distEntry = path.join(root, 'dist/index.js');
if (!existsSync(distEntry)) {
  console.error(`build: ${distEntry} is missing; run "npm run build" in ${root} first`);
  process.exit(1);
}
const ts = require(path.join(root, 'node_modules/typescript'));
// The runner and its models are in their own entries (toolnexus-ts/agents, toolnexus-ts/models).
const library = { ...require(path.join(root, 'dist/runner/index.js')), ...require(path.join(root, 'dist/models/index.js')) };

const sources = ['frameworks/toolnexus-toolkit.ts', 'frameworks/floor-validated.ts'];
if (typeof library.AgentRunner === 'function' && typeof library.OpenAIChatModel === 'function') {
  sources.push(
    'frameworks/toolnexus.ts',
    'frameworks/toolnexus-fetch.ts',
    'frameworks/toolnexus-guarded.ts',
    'frameworks/toolnexus-model.ts',
  );
} else {
  rmSync(path.join(here, 'frameworks/toolnexus.js'), { force: true });
  rmSync(path.join(here, 'frameworks/toolnexus-fetch.js'), { force: true });
  console.error('build: dist exports no AgentRunner/OpenAIChatModel yet; the toolnexus-ts AgentRunner row is left out');
}

const configPath = path.join(here, 'tsconfig.json');
const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) });
const program = ts.createProgram(
  sources.map((s) => path.join(here, s)),
  config.options,
);
const emitted = program.emit();
const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
if (diagnostics.length > 0) fail(diagnostics);

function fail(list) {
  const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => here, getNewLine: () => '\n' };
  console.error(ts.formatDiagnostics(list, host));
  process.exit(1);
}
