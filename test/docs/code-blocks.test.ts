/**
 * Every ```ts block of every page under docs/ compiles under strict settings: as a module on
 * its own, or in the wrapper the HTML comment before it declares (test/fixtures/doc-blocks.ts).
 * No block goes unchecked; the programs among them (`export async function main`) are also
 * run, by their page's docs test, which must exist.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { blockErrors, docBlocks, docPages, fenceCount } from '../fixtures/doc-blocks';

const blocks = docPages().flatMap(docBlocks);

describe('every ```ts block in docs/*.md', () => {
  it('is found, each page block by block', () => {
    for (const page of docPages()) expect([page, docBlocks(page).length]).toEqual([page, fenceCount(page)]);
    expect(blocks.length).toBeGreaterThan(50);
  });

  it('compiles under strict settings, as a module or in the wrapper its comment declares', () => {
    expect(blockErrors(blocks)).toEqual([]);
  }, 300_000);

  it('that is a program is run by its page’s docs test', () => {
    const testRoot = join(__dirname, '..');
    const docsTests = readdirSync(testRoot, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((dir) =>
        readdirSync(join(testRoot, dir.name))
          .filter((f) => f === 'docs.test.ts')
          .map((f) => join(testRoot, dir.name, f)),
      )
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const pagesWithPrograms = [...new Set(blocks.filter((b) => b.program).map((b) => b.page))];
    expect(pagesWithPrograms.length).toBeGreaterThan(0);
    for (const page of pagesWithPrograms) expect([page, docsTests.includes(`docPrograms('${page}')`)]).toEqual([page, true]);
  });
});
