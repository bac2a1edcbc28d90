/**
 * Each published entry reaches, through its sources' static imports (type-only ones included,
 * since a declaration file keeps them), only the packages its own feature needs: an app that
 * imports `toolnexus-ts/nest` type-checks without `@a2a-js/sdk` installed (docs/design.md,
 * "Entries"). The consumer test (scripts/consumer-test.js) compiles real apps against the packed
 * declarations; this catches the same mistake in the quick set, before a pack.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const exportsMap = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports;

/** The packages every entry may reach: the required peers. */
const PEERS = ['class-transformer', 'class-validator'];
/** What each entry may reach besides them: its own optional peers. */
const OWN: Record<string, string[]> = {
  './postgres': ['pg'],
  './mcp': ['@modelcontextprotocol/client', '@modelcontextprotocol/sdk', '@modelcontextprotocol/server', 'zod'],
  // The MCP module's types (not loaded until the module is configured); never the A2A SDK.
  './nest': ['@modelcontextprotocol/sdk', '@modelcontextprotocol/server', '@nestjs/common', '@nestjs/core', 'zod'],
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
