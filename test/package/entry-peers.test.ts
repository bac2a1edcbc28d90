/**
 * Each published entry reaches, through its sources' static imports (type-only ones included,
 * since a declaration file keeps them), only the packages its own feature needs: an app that
 * imports `toolnexus-ts/nest` type-checks without `@a2a-js/sdk` installed (docs/design.md,
 * "Entries"). The consumer test (scripts/consumer-test.js) compiles real apps against the packed
 * declarations; this catches the same mistake in the quick set, before a pack.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const exportsMap = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports;

/** The packages every entry may reach: the required peers. */
const PEERS = ['class-transformer', 'class-validator'];
/** What each entry may reach besides them: its own optional peers. */
const OWN: Record<string, string[]> = {
  './postgres': ['pg'],
  './mcp': ['@modelcontextprotocol/client', '@modelcontextprotocol/server'],
  // The MCP module's types (not loaded until the module is configured); never the A2A SDK.
  './nest': ['@modelcontextprotocol/server', '@nestjs/common', '@nestjs/core'],
  './ai-sdk': ['ai'],
  './openai-agents': ['@openai/agents'],
  './langchain': ['@langchain/core'],
  './a2a': ['@a2a-js/sdk'],
};

/** The bare packages a source file and everything it imports statically name. */
function reached(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]/gms)) {
      const spec = match[1] as string;
      if (spec.startsWith('.')) {
        const base = resolve(dirname(file), spec);
        const found = [`${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate));
        if (found) stack.push(found);
      } else if (!spec.startsWith('node:')) {
        packages.add(
          spec
            .split('/')
            .slice(0, spec.startsWith('@') ? 2 : 1)
            .join('/'),
        );
      }
    }
  }
  return packages;
}

const entries = Object.entries(exportsMap).flatMap(([name, target]) =>
  typeof target === 'object' && target !== null && 'default' in target
    ? [
        [
          name,
          join(
            ROOT,
            String((target as { default: string }).default)
              .replace('./dist', 'src')
              .replace(/\.js$/, '.ts'),
          ),
        ] as const,
      ]
    : [],
);

it('finds every entry’s source', () => {
  expect(entries.length).toBeGreaterThan(15);
  for (const [, file] of entries) expect(existsSync(file)).toBe(true);
});

it.each(entries)('%s reaches only its own peers', (name, file) => {
  const allowed = new Set([...PEERS, ...(OWN[name] ?? [])]);
  expect([...reached(file)].filter((spec) => !allowed.has(spec)).sort()).toEqual([]);
});

it('would catch an entry reaching another feature’s SDK', () => {
  const nest = entries.find(([name]) => name === './nest')?.[1] as string;
  // The A2A module's options reach the A2A entry's sources; its push options must not pull the SDK in.
  expect(reached(nest).has('@a2a-js/sdk')).toBe(false);
  expect(reached(join(ROOT, 'src', 'a2a', 'server', 'push.ts')).has('@a2a-js/sdk')).toBe(true);
});

/** Every TypeScript file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** The 1.x MCP SDK named in an import, an export or a `require` of `text` (comments are not code). */
function namesSdk1(text: string): boolean {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return /(?:\bfrom\s*|\brequire\(\s*|\bimport\(\s*)['"]@modelcontextprotocol\/sdk(?:\/[^'"]*)?['"]/.test(code);
}

it('no source file imports the 1.x MCP SDK: both eras are served on the v2 packages (a devDependency only, for tests)', () => {
  const files = sources(join(ROOT, 'src'));
  expect(files.length).toBeGreaterThan(100);
  expect(files.filter((file) => namesSdk1(readFileSync(file, 'utf8'))).map((file) => file.slice(ROOT.length + 1))).toEqual([]);
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, unknown> | undefined>;
  expect(Object.keys(manifest.peerDependencies ?? {})).not.toContain('@modelcontextprotocol/sdk');
  expect(Object.keys(manifest.peerDependenciesMeta ?? {})).not.toContain('@modelcontextprotocol/sdk');
});

it('would catch a source file importing the 1.x MCP SDK', () => {
  expect(namesSdk1("import { Server } from '@modelcontextprotocol/sdk/server/index.js';")).toBe(true);
  expect(namesSdk1("import type { Server } from '@modelcontextprotocol/sdk/server/index.js';")).toBe(true);
  expect(namesSdk1("const { Server } = require('@modelcontextprotocol/sdk/server/index.js');")).toBe(true);
  expect(namesSdk1("const sdk = await import('@modelcontextprotocol/sdk');")).toBe(true);
  expect(namesSdk1("import { Server } from '@modelcontextprotocol/server';")).toBe(false);
  expect(namesSdk1("// once on '@modelcontextprotocol/sdk', now on the v2 packages")).toBe(false);
});
