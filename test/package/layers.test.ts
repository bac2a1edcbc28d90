/**
 * The layer line of src/ (docs/design.md, "Layers") holds: no import goes up a layer, no two
 * files import each other in a circle. scripts/check-layers.mjs is the rule; CI runs it in
 * `npm run lint` and here, where it is also shown to fail on a deliberate violation.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'check-layers.mjs');

function check(src: string): { ok: boolean; lines: string[] } {
  try {
    return { ok: true, lines: execFileSync(process.execPath, [SCRIPT, src], { encoding: 'utf8' }).trim().split('\n') };
  } catch (error) {
    const out = (error as { stdout?: string }).stdout ?? '';
    return { ok: false, lines: out.trim().split('\n') };
  }
}

/** The layer names, bottom first, as scripts/check-layers.mjs lists them. */
function layersOfScript(): string[] {
  const text = readFileSync(SCRIPT, 'utf8');
  const list = /export const LAYERS = \[([\s\S]*?)\];/.exec(text)?.[1] ?? '';
  return [...list.matchAll(/'([a-z0-9-]+)'/g)].map((m) => m[1] as string);
}

let copy: string;
beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'toolnexus-layers-'));
  cpSync(join(ROOT, 'src'), copy, { recursive: true });
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

it('src/ has no upward import and no import cycle', () => {
  const result = check(join(ROOT, 'src'));
  expect(result.lines.filter((line) => !line.startsWith('layers:'))).toEqual([]);
  expect(result.ok).toBe(true);
});

it('fails on an import that goes up a layer, a type-only one included', () => {
  appendFileSync(join(copy, 'results', 'helpers.ts'), "\nimport type { AgentRunner } from '../runner/agent-runner';\n");
  const result = check(copy);
  expect(result.ok).toBe(false);
  expect(result.lines).toContain('results/helpers.ts imports runner/agent-runner.ts: "results" is below "runner"');
});

it('fails on a cycle between two files of one folder', () => {
  writeFileSync(join(copy, 'timing', 'ping.ts'), "import { pong } from './pong';\nexport const ping = () => pong;\n");
  writeFileSync(join(copy, 'timing', 'pong.ts'), "import { ping } from './ping';\nexport const pong = () => ping;\n");
  const result = check(copy);
  expect(result.ok).toBe(false);
  expect(result.lines).toContain('import cycle: timing/ping.ts <-> timing/pong.ts');
});

it('fails on a folder that is not on the layer line', () => {
  mkdirSync(join(copy, 'helpers'));
  writeFileSync(join(copy, 'helpers', 'stray.ts'), 'export const stray = 1;\n');
  const result = check(copy);
  expect(result.lines).toContain('helpers/stray.ts: folder "helpers" is not on the layer line');
});

it('fails on an import that goes up inside src/runner (core < durability < features < top), a type-only one included', () => {
  appendFileSync(join(copy, 'runner', 'core', 'usage.ts'), "\nimport type { RunStore } from '../durability/memory';\n");
  appendFileSync(join(copy, 'runner', 'durability', 'retention.ts'), "\nimport { handoffTool } from '../features/handoff';\n");
  appendFileSync(join(copy, 'runner', 'features', 'skills.ts'), "\nimport type { AgentRunner } from '../agent-runner';\n");
  const result = check(copy);
  expect(result.ok).toBe(false);
  expect(result.lines).toContain('runner/core/usage.ts imports runner/durability/memory.ts: "runner/core" is below "runner/durability"');
  expect(result.lines).toContain(
    'runner/durability/retention.ts imports runner/features/handoff.ts: "runner/durability" is below "runner/features"',
  );
  expect(result.lines).toContain('runner/features/skills.ts imports runner/agent-runner.ts: "runner/features" is below "runner/ (top)"');
});

it('fails on a folder of src/runner that is not on its layer line', () => {
  mkdirSync(join(copy, 'runner', 'misc'));
  writeFileSync(join(copy, 'runner', 'misc', 'stray.ts'), 'export const stray = 1;\n');
  const result = check(copy);
  expect(result.lines).toContain('runner/misc/stray.ts: folder "runner/misc" is not on the layer line of "runner"');
});

it('docs/design.md shows the layer line the check enforces, every folder of src/ on it', () => {
  const design = readFileSync(join(ROOT, 'docs', 'design.md'), 'utf8');
  const line = /<!-- layers -->\n```\n([\s\S]*?)\n```/.exec(design)?.[1];
  expect(line?.split(/\s*→\s*/)).toEqual(layersOfScript());
});
