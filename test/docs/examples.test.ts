/**
 * Every TypeScript block marked as a complete example (```ts example) in the README and docs/
 * compiles under the repository's strict options against the package's own sources, so a renamed
 * export or a changed signature breaks this test rather than the reader. One program for all of
 * them; a second, reusing its parsed sources, proves that a broken example is reported with its
 * page and line.
 */
import { describe, expect, it } from 'vitest';
import { compileExamples, examplesIn, type CompileResult } from './compile.js';
import { docFiles } from './markdown.js';

/** Compiling loads the package's whole type graph once: slow on a busy machine. */
const SLOW = 180_000;

describe('the complete examples in the docs', () => {
  const examples = examplesIn(docFiles());
  let compiled: CompileResult | undefined;

  it('are there: the README and the guides mark their complete programs', () => {
    const pages = new Set(examples.map((e) => e.file));
    expect(pages).toContain('README.md');
    expect(pages).toContain('docs/writing-bots.md');
    expect(pages).toContain('docs/testing-bots.md');
    expect(pages).toContain('docs/library-api.md');
    expect(examples.every((e) => e.code.trim() !== '')).toBe(true);
  });

  it(
    'compile with strict tsc against the package',
    () => {
      compiled = compileExamples(examples);
      expect(compiled.problems).toEqual([]);
    },
    SLOW,
  );

  it(
    'fail, naming the page and line, when an example uses an export that does not exist or a wrong type',
    () => {
      const broken = [
        { file: 'docs/broken.md', line: 10, code: "import { defineBott } from 'colloquy';\nconsole.log(defineBott);" },
        { file: 'docs/broken.md', line: 20, code: "import { text } from 'colloquy';\n\nexport const m = text(42);" },
        { file: 'docs/broken.md', line: 30, code: "import { text } from 'colloquy';\nexport const ok = text('fine');" },
      ];
      const { problems } = compileExamples(broken, undefined, compiled?.program);
      expect(problems).toHaveLength(2);
      expect(problems[0]).toMatch(/^docs\/broken\.md:10: TS2724 .*defineBott/);
      expect(problems[1]).toMatch(/^docs\/broken\.md:22: TS2345 /);
    },
    SLOW,
  );
});
