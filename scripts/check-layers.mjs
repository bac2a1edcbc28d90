#!/usr/bin/env node
// The layer line of src/ (docs/design.md, "Layers"), enforced: a file may import, by value or by
// type, only files of its own folder or of a folder earlier in LAYERS; and no two files import
// each other in a circle, except through type-only imports inside one folder. Reads import and
// export declarations, require() and import() with a relative path; prints each violation and
// exits 1 when there is any. usage: node scripts/check-layers.mjs [SRC_DIR]
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** Bottom first. A folder not listed here is itself a violation, so a new one is placed on purpose. */
export const LAYERS = [
  'errors',
  'results',
  'timing',
  'metadata',
  'telemetry',
  'decorators',
  'schema',
  'toolkit',
  'skills',
  'suspension',
  'http',
  'models',
  'openapi',
  'sessions',
  'deliveries',
  'runner',
  'decisions',
  'stores',
  'webhooks',
  'tickets',
  'inbox',
  'chat',
  'channels',
  'mcp',
  'a2a',
  'cli',
  'nest',
  'adapters',
  'dbos',
  'testing',
];
/** Files directly in src/ (the root entry) sit on the toolkit's layer: the root is the tools layer. */
const ROOT_FILES_LAYER = 'toolkit';
/**
 * The layer line inside a folder, bottom first, for a folder that has one: its subfolders in
 * order, and the files directly in the folder on top of them all (they compose the rest). Inside
 * such a folder a file may import only files of its own subfolder or of one earlier here; a
 * subfolder not listed is itself a violation. docs/design.md, "The runner".
 */
export const SUBLAYERS = {
  runner: ['core', 'durability', 'features'],
};
/** The name of the top of a folder with sublayers: its files directly in it. */
const TOP = '(top)';

export function check(srcDir) {
  const root = resolve(srcDir);
  const files = [];
  (function walk(dir) {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|js|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(path);
    }
  })(root);
  const folderOf = (file) => {
    const parts = relative(root, file).split(sep);
    return parts.length > 1 ? parts[0] : ROOT_FILES_LAYER;
  };
  const rank = (folder) => LAYERS.indexOf(folder);
  const subOf = (file) => {
    const parts = relative(root, file).split(sep);
    return parts.length > 2 ? parts[1] : TOP;
  };
  const subRank = (folder, sub) => (sub === TOP ? SUBLAYERS[folder].length : SUBLAYERS[folder].indexOf(sub));
  const where = (folder, sub) => (sub === TOP ? `${folder}/ (top)` : `${folder}/${sub}`);
  const target = (from, spec) => {
    const base = resolve(dirname(from), spec);
    for (const candidate of [base, `${base}.ts`, `${base}.js`, join(base, 'index.ts'), join(base, 'index.js')]) {
      if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
    }
    return undefined;
  };
  const problems = [];
  const valueEdges = new Map();
  for (const file of files) {
    const folder = folderOf(file);
    if (rank(folder) < 0) problems.push(`${relative(root, file)}: folder "${folder}" is not on the layer line`);
    const sub = SUBLAYERS[folder] ? subOf(file) : undefined;
    if (sub !== undefined && subRank(folder, sub) < 0) {
      problems.push(`${relative(root, file)}: folder "${folder}/${sub}" is not on the layer line of "${folder}"`);
    }
    const text = readFileSync(file, 'utf8');
    const pattern =
      /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)|import\(\s*['"]([^'"]+)['"]\s*\)/g;
    const values = new Set();
    for (const match of text.matchAll(pattern)) {
      const spec = match[4] ?? match[5] ?? match[6] ?? match[7];
      if (!spec.startsWith('.')) continue;
      const to = target(file, spec);
      if (!to) {
        problems.push(`${relative(root, file)}: cannot resolve "${spec}"`);
        continue;
      }
      let typeOnly = Boolean(match[2]);
      const clause = match[3]?.trim();
      if (!typeOnly && clause && /^\{[^}]*\}$/.test(clause)) {
        const names = clause
          .slice(1, -1)
          .split(',')
          .map((n) => n.trim())
          .filter(Boolean);
        typeOnly = names.length > 0 && names.every((n) => n.startsWith('type '));
      }
      const toFolder = folderOf(to);
      if (toFolder !== folder && rank(toFolder) > rank(folder)) {
        problems.push(`${relative(root, file)} imports ${relative(root, to)}: "${folder}" is below "${toFolder}"`);
      }
      if (sub !== undefined && toFolder === folder) {
        const toSub = subOf(to);
        if (toSub !== sub && subRank(folder, toSub) > subRank(folder, sub)) {
          problems.push(
            `${relative(root, file)} imports ${relative(root, to)}: "${where(folder, sub)}" is below "${where(folder, toSub)}"`,
          );
        }
      }
      if (!typeOnly || toFolder !== folder) values.add(to);
    }
    valueEdges.set(file, values);
  }
  // Cycles between files (Tarjan's strongly connected components).
  let index = 0;
  const stack = [];
  const state = new Map();
  const strong = (file) => {
    const mine = { index, low: index, on: true };
    index += 1;
    state.set(file, mine);
    stack.push(file);
    for (const next of valueEdges.get(file) ?? []) {
      const seen = state.get(next);
      if (!seen) {
        strong(next);
        mine.low = Math.min(mine.low, state.get(next).low);
      } else if (seen.on) mine.low = Math.min(mine.low, seen.index);
    }
    if (mine.low === mine.index) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        state.get(member).on = false;
        component.push(relative(root, member));
      } while (member !== file);
      if (component.length > 1) problems.push(`import cycle: ${component.sort().join(' <-> ')}`);
    }
  };
  for (const file of files) if (!state.has(file)) strong(file);
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const problems = check(process.argv[2] ?? join(dirname(new URL(import.meta.url).pathname), '..', 'src'));
  for (const problem of problems) console.log(problem);
  console.log(
    problems.length
      ? `layers: ${problems.length} problem(s)`
      : `layers: ${LAYERS.length} folders in order (runner: ${SUBLAYERS.runner.join(' < ')} < top), no upward import, no cycle`,
  );
  process.exit(problems.length ? 1 : 0);
}
