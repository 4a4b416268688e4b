/**
 * Every relative link and #anchor in the README and docs/ leads somewhere, with anchors checked
 * against the target page's headings as GitHub slugs them. The checker itself is tested on pages
 * written to a temporary folder, so a check that could not fail would be caught too.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';
import { anchors, brokenLinks, docFiles, links, ROOT, slug } from './markdown.js';

describe('the documentation', () => {
  it('covers the README, docs/ and the READMEs beside the code', () => {
    const files = docFiles();
    expect(files).toContain('README.md');
    expect(files).toContain('docs/README.md');
    expect(files.filter((f) => f.startsWith('docs/')).length).toBeGreaterThanOrEqual(13);
  });

  it('has no broken relative link or anchor', () => {
    expect(brokenLinks(ROOT, docFiles())).toEqual([]);
  });
});

describe('the link checker', () => {
  const temp = tempDir('colloquy-doc-links-');
  const dir = temp.dir;
  afterAll(() => temp.remove());
  const page = (path: string, text: string): void => {
    mkdirSync(dirname(temp.path(path)), { recursive: true });
    writeFileSync(temp.path(path), text);
  };

  it('names the file, line and target of a missing file and of a missing anchor', () => {
    page('README.md', '# Top\n\nSee [the guide](docs/guide.md#setting-up) and [nothing](docs/gone.md).\n');
    page('docs/guide.md', '# Guide\n\n## Set up\n\n[back](../README.md#top) [self](#guide) [wrong](#setup)\n');
    expect(brokenLinks(dir, ['README.md', 'docs/guide.md'])).toEqual([
      'README.md:3: docs/guide.md#setting-up: no heading or id "setting-up" in docs/guide.md',
      'README.md:3: docs/gone.md: no such file (docs/gone.md)',
      'docs/guide.md:5: #setup: no heading or id "setup" in docs/guide.md',
    ]);
  });

  it('ignores links inside code, follows reference definitions, and skips links with a scheme', () => {
    page('a.md', '`[x](missing.md)`\n\n```md\n[y](missing.md)\n```\n\n[z]: missing-too.md\n\n[web](https://example.com/x#y)\n');
    expect(brokenLinks(dir, ['a.md'])).toEqual(['a.md:7: missing-too.md: no such file (missing-too.md)']);
  });

  it('accepts explicit ids, numbered repeats, and a folder with a README', () => {
    page('b.md', '<a id="here"></a>\n\n## Notes\n\n## Notes\n\n[1](#here) [2](#notes-1) [3](docs/) [4](docs#guide)\n');
    expect(brokenLinks(dir, ['b.md'])).toEqual(['b.md:7: docs#guide: an anchor into a folder without a README.md']);
  });

  it('refuses a link that leaves the repository', () => {
    page('c.md', '[out](../../etc/passwd)\n');
    expect(brokenLinks(dir, ['c.md'])).toEqual(['c.md:1: ../../etc/passwd: leads outside the repository']);
  });
});

describe("GitHub's heading slugs", () => {
  it.each([
    ['Getting started', 'getting-started'],
    ['In a project of your own', 'in-a-project-of-your-own'],
    ["Where a turn's time went, and what changed", 'where-a-turns-time-went-and-what-changed'],
    ['The `colloquy` command', 'the-colloquy-command'],
    ['Command line · Configuration', 'command-line--configuration'],
    ['SQLite: group commit and checkpoints', 'sqlite-group-commit-and-checkpoints'],
    ['Using [links](x.md) and **bold**', 'using-links-and-bold'],
    ['snake_case and 1,000,000 conversations', 'snake_case-and-1000000-conversations'],
    ['Ünïcode stays', 'ünïcode-stays'],
  ])('%s → %s', (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });

  it('numbers repeated headings and ignores headings inside code', () => {
    expect([...anchors('# A\n## A\n```\n# A\n```\n### A #\n')]).toEqual(['a', 'a-1', 'a-2']);
  });

  it('reads links with titles and angle brackets', () => {
    expect(links('[a](x.md "title") [b](<y.md>) ![c](img/z.png)')).toEqual([
      { target: 'x.md', line: 1 },
      { target: 'y.md', line: 1 },
      { target: 'img/z.png', line: 1 },
    ]);
  });
});
