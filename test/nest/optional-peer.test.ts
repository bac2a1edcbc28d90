import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Core users never install Nest: the package root must load and work with `@nestjs/*`
 * and `rxjs` absent, and only `toolnexus-ts/nest` may need them.
 */
const root = join(__dirname, '..', '..');

/** Runs `script` in a child process where requiring @nestjs/* or rxjs fails as if they were not installed. */
function withoutNest(script: string) {
  const hideNest = `
    const Module = require('node:module');
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (request, ...rest) {
      if (/^(@nestjs\\/|rxjs($|\\/))/.test(request)) {
        const error = new Error("Cannot find module '" + request + "'");
        error.code = 'MODULE_NOT_FOUND';
        throw error;
      }
      return resolve.call(this, request, ...rest);
    };`;
  return spawnSync(process.execPath, ['-r', join(root, 'test', 'fixtures', 'register-ts.js'), '-e', `${hideNest}\n${script}`], {
    cwd: root,
    encoding: 'utf8',
    timeout: 30_000,
  });
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? sourcesUnder(full) : full.endsWith('.ts') ? [full] : [];
  });
}

describe('Nest stays optional', () => {
  it('the package root loads and runs tools, suspensions and the runner without @nestjs/* installed', () => {
    const run = withoutNest(`
      require('reflect-metadata');
      const core = { ...require('./src'), ...require('./src/suspension'), ...require('./src/runner') };
      const toolkit = new core.Toolkit().register(core.defineTool({
        name: 'approve', description: 'needs approval', inputSchema: { type: 'object' },
        run: (args, ctx) => (ctx && ctx.answer ? 'approved' : core.pending({ kind: 'approval', prompt: 'ok?' })),
      }));
      const coordinator = new core.ResumeCoordinator({ toolkit });
      (async () => {
        const first = await coordinator.execute('approve', {});
        const done = await coordinator.resolve({ id: core.pendingOf(first).id, ok: true });
        const loaded = Object.keys(require.cache).filter((file) => file.includes('@nestjs') || file.includes('/rxjs/'));
        console.log(JSON.stringify({ output: done.output, loaded: loaded.length, runner: typeof core.AgentRunner }));
      })().catch((error) => { console.error(error); process.exit(1); });
    `);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ output: 'approved', loaded: 0, runner: 'function' });
  });

  it('the nest entry point says which peer is missing', () => {
    const run = withoutNest(`require('./src/nest');`);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/Cannot find module '@nestjs\/(common|core)'/);
  });

  it('no core source imports Nest, and the root does not re-export the nest entry point', () => {
    const offenders = sourcesUnder(join(root, 'src'))
      .filter((file) => !relative(join(root, 'src'), file).startsWith('nest'))
      .filter((file) => /from '@nestjs\/|require\('@nestjs\/|from 'rxjs'/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(offenders).toEqual([]);
    expect(readFileSync(join(root, 'src', 'index.ts'), 'utf8')).not.toMatch(/['"]\.\/nest['"/]/);
  });

  it('declares Nest as optional peers, and publishes ./nest beside the root', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
      devDependencies: Record<string, string>;
      exports: Record<string, { types: string; default: string }>;
    };
    for (const peer of ['@nestjs/common', '@nestjs/core', 'rxjs']) {
      expect(pkg.peerDependencies[peer]).toBeDefined();
      expect(pkg.peerDependenciesMeta[peer]).toEqual({ optional: true });
      expect(pkg.devDependencies[peer]).toBeDefined();
      expect(pkg.dependencies?.[peer]).toBeUndefined();
    }
    expect(Object.keys(pkg.dependencies ?? {}).filter((d) => /nestjs|rxjs|tsyringe|inversify/.test(d))).toEqual([]);
    expect(pkg.exports['./nest']).toEqual({ types: './dist/nest/index.d.ts', default: './dist/nest/index.js' });
  });
});
