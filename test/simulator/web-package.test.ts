/** The simulator page ships in the package and is found from the built `dist/` as from `src/`. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAGE_DIR } from '../../src/simulator/web/page.js';

const ROOT = join(import.meta.dirname, '../..');

describe('the simulator page in the package', () => {
  it('is packed with the LICENSE', { timeout: 60_000 }, () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const files = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
    const page = readdirSync(PAGE_DIR).map((name) => `simulator-page/${name}`);
    expect(page.length).toBeGreaterThanOrEqual(10);
    expect(files).toEqual(expect.arrayContaining([...page, 'LICENSE']));
  });

  it('sits where src/simulator/web/page.ts and dist/simulator/web/page.js both look for it', () => {
    expect(relative(ROOT, PAGE_DIR)).toBe('simulator-page');
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: { rootDir: string; outDir: string } };
    // page.ts resolves ../../../simulator-page; the build keeps its depth only while src/ maps to dist/.
    expect(build.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
  });
});
