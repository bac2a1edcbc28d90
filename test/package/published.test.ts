/**
 * What someone who found the package on the registry gets besides the code: the guides the
 * README links to, every file those guides link to, and where the repository is. The file
 * list is npm's own (`npm pack --dry-run`, scripts skipped: the build's dist/ is
 * scripts/consumer-test.js's to check).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

interface Packed {
  files: Array<{ path: string }>;
}

let shipped: Set<string>;

beforeAll(() => {
  const out = execFileSync(NPM, ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  shipped = new Set((JSON.parse(out) as Packed[])[0]!.files.map((file) => file.path));
}, 120_000);

/** The relative links of a Markdown file (no scheme, no bare anchor), each without its anchor. */
function relativeLinks(markdown: string): string[] {
  const links: string[] = [];
  for (const [, target] of markdown.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z+.-]*:/i.test(target!) || target!.startsWith('#')) continue;
    links.push(target!.split('#')[0]!);
  }
  return links;
}

it('ships every guide of docs/ and what they show', () => {
  const docs = readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`);
  expect(docs.length).toBeGreaterThan(10);
  expect(docs.filter((file) => !shipped.has(file))).toEqual([]);
});

it('ships the target of every relative link of the README and of the shipped guides', () => {
  const pages = ['README.md', ...[...shipped].filter((file) => file.endsWith('.md') && file !== 'README.md')];
  const missing: string[] = [];
  let links = 0;
  for (const page of pages) {
    for (const link of relativeLinks(readFileSync(join(ROOT, page), 'utf8'))) {
      links += 1;
      const target = posix.normalize(posix.join(posix.dirname(page), link));
      if (!shipped.has(target)) missing.push(`${page} → ${link}`);
    }
  }
  // The README alone links to the guides some thirty times.
  expect(links).toBeGreaterThan(30);
  expect(missing).toEqual([]);
});

it('names its repository, as npm reads it', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { repository?: { type?: string; url?: string } };
  expect(manifest.repository?.type).toBe('git');
  expect(manifest.repository?.url).toMatch(/^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/);
  expect(shipped.has('package.json')).toBe(true);
});

it('ships no test, no example build and no local state', () => {
  const stray = [...shipped].filter((file) => /^(test|dist-examples|node_modules|\.ci|\.git)\//.test(file));
  expect(stray).toEqual([]);
  // Nothing but what package.json's "files" names, and what npm always adds.
  const roots = new Set([...shipped].map((file) => file.split('/')[0]!));
  const expected = ['dist', 'src', 'docs', 'examples', 'CHANGELOG.md', 'LICENSE', 'README.md', 'package.json'];
  expect([...roots].filter((root) => !expected.includes(root))).toEqual([]);
});
