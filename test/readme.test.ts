import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..');

describe('README', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');

  it('quick start is exactly examples/quick-start.ts (which CI runs)', () => {
    const block = /## Quick start\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(readFileSync(join(root, 'examples', 'quick-start.ts'), 'utf8'));
  });

  it('gives exactly the two set-up commands, and .ci/run runs the same test command', () => {
    const setUp = /## Set up\n\n```bash\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const commands = setUp
      .split('\n')
      .filter(Boolean)
      .map((line) => line.replace(/\s+#.*$/, '').trim());
    expect(commands).toEqual(['npm install && npm start', 'npm test']);
    expect(readFileSync(join(root, '.ci', 'run'), 'utf8')).toMatch(/^(timeout [^\n]*)?npm test$/m);
  });

  it('links only to docs that exist', () => {
    for (const [, target] of readme.matchAll(/\]\((docs\/[^)]+)\)/g)) {
      // The group is not optional: every match has it.
      const [file, anchor] = target!.split('#') as [string, string | undefined];
      expect(() => readFileSync(join(root, file))).not.toThrow();
      if (anchor === undefined) continue;
      // GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
      const anchors = [...readFileSync(join(root, file), 'utf8').matchAll(/^#+ (.+)$/gm)].map(([, heading]) =>
        heading!
          .toLowerCase()
          .replace(/[^\w\s-]/g, '')
          .replace(/\s/g, '-'),
      );
      expect(anchors).toContain(anchor);
    }
  });
});
