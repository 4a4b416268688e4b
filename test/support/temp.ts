/** Temporary folders for tests, under the system temp folder. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temporary folder and the way to remove it. */
export interface TempDir {
  readonly dir: string;
  /** A path inside the folder. */
  path(name: string): string;
  /** Removes the folder and everything in it (idempotent). */
  remove(): void;
}

/** A new, empty folder whose name starts with `prefix`; the caller removes it (usually in `afterAll`). */
export function tempDir(prefix = 'colloquy-test-'): TempDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, path: (name) => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
