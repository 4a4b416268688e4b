/**
 * The simulator page's files: plain `.js`, `.css` and `.html` in the package's `simulator-page/`
 * folder, which sits three levels above this module both in `src/` and in the built `dist/`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ColloquyError } from '../../errors.js';

/** The folder the page's assets are served from (`/assets/<name>`). */
export const PAGE_DIR = fileURLToPath(new URL('../../../simulator-page/', import.meta.url));

let shell: string | undefined;

/** The page's HTML, with its assets under `base` (where the router is mounted, say `/simulator`). */
export function pageHtml(base: string): string {
  shell ??= readPage('index.html');
  return shell.replaceAll('{{base}}', escapeAttr(base));
}

/** Fails at start, naming the folder, when the package was installed without its page. */
export function checkPageDir(): void {
  if (!existsSync(`${PAGE_DIR}/app.js`)) {
    throw new ColloquyError('simulator_page_missing', `the web simulator's page is missing: expected its files in ${PAGE_DIR} (is simulator-page/ in the package?)`);
  }
}

function readPage(name: string): string {
  return readFileSync(`${PAGE_DIR}/${name}`, 'utf8');
}

function escapeAttr(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
