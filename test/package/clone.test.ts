/**
 * The `colloquy` command in a clone of the repository that was never built (no dist/): it runs
 * from src/ through tsx, and says what to do when it cannot; and a database driver that is not
 * installed is a sentence naming the package, when the store opens. Each case is a copy of the
 * repository's files in a temporary folder, with node_modules linked in minus what the case lacks.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type TempDir, tempDir } from '../support/temp.js';

const ROOT = join(import.meta.dirname, '..', '..');
const made: TempDir[] = [];

/** A copy of the checkout without dist/, whose node_modules lacks `without`. */
function clone(without: readonly string[] = []): string {
  const temp = tempDir('colloquy-clone-');
  made.push(temp);
  const dir = temp.dir;
  for (const f of ['package.json', 'bin', 'src', 'migrations', 'simulator-page', 'bots']) cpSync(join(ROOT, f), join(dir, f), { recursive: true });
  mkdirSync(join(dir, 'node_modules'));
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (!without.includes(name) && name !== '.bin') symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
  }
  return dir;
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node bin/colloquy.js …` in `dir`, as a user types it: no conditions, no loaders. */
function colloquy(dir: string, args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('COLLOQUY_') && k !== 'NODE_OPTIONS'));
  return new Promise((done) => {
    execFile(process.execPath, ['bin/colloquy.js', ...args], { cwd: dir, env: { ...clean, ...env } }, (err, stdout, stderr) => {
      done({ code: err ? Number((err as { code?: unknown }).code ?? 1) || 1 : 0, stdout, stderr });
    });
  });
}

const explain = (r: Run): string => `exit ${r.code}\n${r.stdout}\n${r.stderr}`;
const NO_TRACE = /\n\s+at |ERR_MODULE_NOT_FOUND/;

afterAll(() => {
  for (const temp of made) temp.remove();
});

describe('the colloquy command in a clone that was never built', () => {
  it('prints its help and checks a TypeScript bot, running from src/', async () => {
    const dir = clone();
    const help = await colloquy(dir, ['--help']);
    expect(help.code, explain(help)).toBe(0);
    expect(help.stdout).toContain('Usage: colloquy <command>');
    // The bot's own `import … from 'colloquy'` resolves to the same src/ copy as the command.
    const check = await colloquy(dir, ['check', 'bots/pizza.ts']);
    expect(check.code, explain(check)).toBe(0);
    expect(check.stdout).toContain('1 bot checked: no findings.');
  });

  it('says what to do when neither dist/ nor tsx is there', async () => {
    const r = await colloquy(clone(['tsx']), ['--help']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('this copy of Colloquy has not been built (no dist/), and tsx');
    expect(r.stderr).toContain('run `npm install` first');
    expect(r.stderr).not.toMatch(NO_TRACE);
  });
});

describe('the colloquy command in a checkout whose dist/ is older than src/', () => {
  /** A clone with a `.git` and a built command that only says it ran, dated a day before the sources. */
  function staleClone(without: readonly string[] = []): string {
    const dir = clone(without);
    mkdirSync(join(dir, '.git'));
    mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
    const built = join(dir, 'dist', 'cli', 'main.js');
    writeFileSync(built, "export async function main() { console.log('the old build ran'); return 0; }\n");
    const dayAgo = new Date(Date.now() - 86_400_000);
    utimesSync(built, dayAgo, dayAgo);
    return dir;
  }

  it('runs from the sources, and says so, rather than the old build', async () => {
    const r = await colloquy(staleClone(), ['--help']);
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toContain('Usage: colloquy <command>');
    expect(r.stdout).not.toContain('the old build ran');
    expect(r.stderr).toContain('dist/ is older than src/ in this checkout; running from the sources');
  });

  it('warns when tsx is not there to run the sources', async () => {
    const r = await colloquy(staleClone(['tsx']), ['--help']);
    expect(r.stdout).toContain('the old build ran');
    expect(r.stderr).toContain('warning: dist/ is older than src/ in this checkout and tsx is not installed');
  });
});

describe('a database driver that is not installed', () => {
  it('serve on SQLite without better-sqlite3 names the package to install', async () => {
    const r = await colloquy(clone(['better-sqlite3']), ['serve', 'bots'], { PORT: '0', COLLOQUY_DB: 'data/x.db' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('colloquy serve: The SQLite store needs the better-sqlite3 package, which is not installed: npm install better-sqlite3');
    expect(r.stderr).not.toMatch(NO_TRACE);
  });

  it('migrate on PostgreSQL without pg names the package to install, before any connection', async () => {
    const r = await colloquy(clone(['pg']), ['migrate'], { COLLOQUY_DATABASE_URL: 'postgres://app:secret@127.0.0.1:1/none' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('colloquy migrate: The PostgreSQL store needs the pg package, which is not installed: npm install pg');
    expect(r.stderr).not.toContain('secret');
    expect(r.stderr).not.toMatch(NO_TRACE);
  });
});
