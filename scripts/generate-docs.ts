/**
 * `npm run docs:generate`: writes the reference pages generated from the code (see
 * reference-docs.ts) and says which ones changed.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { referencePages } from './reference-docs.js';

const ROOT = join(import.meta.dirname, '..');

for (const [path, text] of Object.entries(referencePages())) {
  const file = join(ROOT, path);
  let before: string | undefined;
  try {
    before = readFileSync(file, 'utf8');
  } catch {
    before = undefined;
  }
  if (before === text) {
    console.log(`${path}: up to date`);
    continue;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  console.log(`${path}: ${before === undefined ? 'written' : 'updated'}`);
}
