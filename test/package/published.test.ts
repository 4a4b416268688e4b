/**
 * The package as dependent projects get it: `npm pack` (dist/ built by prepack), publint and
 * arethetypeswrong on the tarball, then the tarball installed into three fresh projects, each
 * compiled by strict tsc with `skipLibCheck: false` and run:
 *
 * - authoring: `colloquy xstate`, a bot file only; `import 'colloquy'` loads no driver, no HTTP
 *   server and no native module, and neither database driver is installed;
 * - SQLite: `colloquy xstate express better-sqlite3` (and @types/better-sqlite3, for the type
 *   checks that reach into the store's database), a bot, a server, a harness script, the command;
 * - PostgreSQL: `colloquy xstate express pg`, without better-sqlite3 at all, `colloquy serve` and
 *   a server of its own on the test database.
 *
 * No registry: npm installs `--offline`, from the npm cache this repository's own install filled
 * (falling back to `--prefer-offline` only on a machine whose cache lacks a package). The installs
 * skip scripts: better-sqlite3 would compile for minutes without a prebuilt binary, so the SQLite
 * project gets the binary this repository built, for the same better-sqlite3 version.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyDatabaseUrl } from '../support/postgres.js';
import { type TempDir, tempDir } from '../support/temp.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'node_modules/.bin');
const FIXTURE = join(ROOT, 'test/fixtures/newcomer');
const MANIFEST = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
const versionOf = (name: string): string => (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
/** The versions this repository installed, so that the npm cache has them. */
const pinned = (name: string): string => `${name}@${versionOf(name)}`;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end; never throws for a non-zero exit (the test looks at the code). */
function run(cmd: string, args: readonly string[], cwd: string, extra: Record<string, string> = {}): Promise<Run> {
  // npm's own variables (set when this runs under `npm test`) would describe this repository to the nested npm.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_(package|lifecycle)_/.test(k) && !k.startsWith('COLLOQUY_')));
  const env = { ...inherited, ...extra };
  return new Promise((done) => {
    execFile(cmd, args, { cwd, env: { ...env, NO_COLOR: '1' }, maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
      done({ code: err ? Number((err as { code?: unknown }).code ?? 1) || 1 : 0, stdout, stderr });
    });
  });
}

const explain = (r: Run): string => `exit ${r.code}\n${r.stdout}\n${r.stderr}`;

/** A whole type check of the project and its dependencies' declarations takes a while on a busy machine. */
const SLOW = 180_000;

let temp: TempDir | undefined;
let dir: string;
let tarball: string;
let authoring: string;
let project: string;
let postgres: string;
let install: Run;

/** npm install from the cache alone; from the registry only for what the cache lacks. */
async function npmInstall(cwd: string, packages: readonly string[]): Promise<Run> {
  const args = ['install', '--ignore-scripts', '--no-audit', '--no-fund', ...packages];
  const offline = await run('npm', ['--offline', ...args], cwd);
  if (offline.code === 0 || !/ENOTCACHED/.test(offline.stderr)) return offline;
  return run('npm', ['--prefer-offline', ...args], cwd);
}

/** A fresh project: package.json, tsconfig.json (strict, skipLibCheck false), `files` of the newcomer fixture in src/. */
function newProject(name: string, files: readonly string[], extra: Record<string, unknown> = {}): string {
  const where = join(dir, name);
  mkdirSync(join(where, 'src'), { recursive: true });
  writeFileSync(join(where, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type: 'module', ...extra }, null, 2));
  for (const f of files) cpSync(join(FIXTURE, f), join(where, 'src', f), { recursive: true });
  const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, outDir: 'dist', rootDir: 'src' };
  writeFileSync(join(where, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }, null, 2));
  return where;
}

async function installed(cwd: string, packages: readonly string[]): Promise<Run> {
  const r = await npmInstall(cwd, packages);
  if (r.code !== 0) throw new Error(`npm install in ${cwd} failed: ${explain(r)}`);
  return r;
}

beforeAll(async () => {
  temp = tempDir('colloquy-published-');
  dir = temp.dir;
  const pack = await run('npm', ['pack', '--pack-destination', dir], ROOT);
  const packed = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
  if (pack.code !== 0 || packed.length !== 1) throw new Error(`npm pack failed: ${explain(pack)}`);
  tarball = join(dir, packed[0]!);

  authoring = newProject('authoring', ['bot.ts', 'menu.ts']);
  project = newProject('newcomer', readdirSync(FIXTURE), { allowScripts: { 'better-sqlite3': true } });
  postgres = newProject('on-postgres', ['bot.ts', 'menu.ts', 'pg-server.ts']);
  cpSync(join(ROOT, 'test/fixtures/what-loads.mjs'), join(authoring, 'what-loads.mjs'));
  // One at a time: concurrent installs would share (and lock) the npm cache.
  await installed(authoring, [tarball, pinned('xstate')]);
  install = await installed(project, [tarball, pinned('xstate'), pinned('express'), pinned('better-sqlite3'), pinned('@types/better-sqlite3')]);
  await installed(postgres, [tarball, pinned('xstate'), pinned('express'), pinned('pg')]);

  const release = 'node_modules/better-sqlite3/build/Release';
  mkdirSync(join(project, release), { recursive: true });
  copyFileSync(join(ROOT, release, 'better_sqlite3.node'), join(project, release, 'better_sqlite3.node'));
}, 480_000);

afterAll(() => {
  temp?.remove();
});

/** Stops a child with SIGTERM and waits for it to exit. */
function stop(proc: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((stopped) => {
    proc.once('exit', () => stopped());
    proc.kill('SIGTERM');
  });
}

/** `node node_modules/colloquy/bin/colloquy.js serve …` in a project, until its banner names the URL. */
function serveIn(cwd: string, args: readonly string[], env: Record<string, string>): Promise<{ url: string; stop: () => Promise<void> }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('COLLOQUY_') && !/^npm_(package|lifecycle)_/.test(k)));
  const proc = spawn(process.execPath, ['node_modules/colloquy/bin/colloquy.js', 'serve', ...args], { cwd, env: { ...clean, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stderr.on('data', (d: Buffer) => void (err += d));
  return new Promise((done, fail) => {
    proc.stdout.on('data', (d: Buffer) => {
      out += d;
      const m = /webhook\s+(http:\/\/[^/\s]+)\/webhook/.exec(out);
      if (m) done({ url: m[1]!, stop: () => stop(proc) });
    });
    proc.once('exit', (code) => fail(new Error(`serve exited with ${code}: ${out}\n${err}`)));
  });
}

describe('the published package', () => {
  it(
    'passes publint',
    async () => {
      const r = await run(join(BIN, 'publint'), ['--strict', tarball], ROOT);
      expect(r.code, explain(r)).toBe(0);
    },
    SLOW,
  );

  it(
    'has types that resolve for every export (arethetypeswrong, ESM only)',
    async () => {
      const r = await run(join(BIN, 'attw'), ['--profile', 'esm-only', '--format', 'ascii', tarball], ROOT);
      expect(r.code, explain(r)).toBe(0);
    },
    SLOW,
  );

  it('ships dist/ and needs no install script of its own', () => {
    const pkg = JSON.parse(readFileSync(join(project, 'node_modules/colloquy/package.json'), 'utf8')) as { scripts?: Record<string, string> };
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(pkg.scripts?.[hook], hook).toBeUndefined();
    expect(readFileSync(join(project, 'node_modules/colloquy/dist/index.d.ts'), 'utf8')).toContain('defineBot');
  });

  it(
    'leaves nothing for npm to ask about beyond what the README approves',
    async () => {
      expect(install.stderr).not.toMatch(/install-scripts|allowScripts/);
      const r = await run('npm', ['install-scripts', 'ls', '--json'], project);
      expect(r.code, explain(r)).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ allowScripts: [] });
    },
    SLOW,
  );

  it(
    'compiles a bot, a server, a harness script and type checks with strict tsc and skipLibCheck false',
    async () => {
      const r = await run(join(BIN, 'tsc'), ['-p', 'tsconfig.json'], project);
      expect(r.code, explain(r)).toBe(0);
    },
    SLOW,
  );

  it(
    'imports every subpath of the exports map',
    async () => {
      const subpaths = Object.keys(MANIFEST.exports)
        .filter((k) => k !== './package.json')
        .map((k) => `colloquy${k.slice(1)}`);
      const script = `for (const s of ${JSON.stringify(subpaths)}) { const m = await import(s); if (Object.keys(m).length === 0) throw new Error(s + ' exports nothing'); }`;
      const r = await run(process.execPath, ['--input-type=module', '-e', script], project);
      expect(r.code, explain(r)).toBe(0);
    },
    SLOW,
  );

  it(
    'runs the server: a webhook in, the bot answers through the sandbox',
    async () => {
      const r = await run(process.execPath, ['dist/server.js'], project);
      expect(r.code, explain(r)).toBe(0);
      expect(JSON.parse(r.stdout.trim())).toEqual({ status: 200, sent: ['buttons'] });
    },
    SLOW,
  );

  it(
    'runs a harness test from colloquy/testing',
    async () => {
      const r = await run(process.execPath, ['dist/harness.js'], project);
      expect(r.code, explain(r)).toBe(0);
      expect(r.stdout).toContain('"harness":"ok"');
    },
    SLOW,
  );

  it(
    'runs the colloquy command on JavaScript bots without tsx',
    async () => {
      const r = await run(process.execPath, ['node_modules/colloquy/bin/colloquy.js', 'check', 'dist/bot.js'], project);
      expect(r.code, explain(r)).toBe(0);
    },
    SLOW,
  );

  it(
    'says that tsx is missing when a TypeScript bot cannot load',
    async () => {
      const r = await run(process.execPath, ['node_modules/colloquy/bin/colloquy.js', 'check', 'src/bot.ts'], project);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('TypeScript bot files need tsx');
      expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    },
    SLOW,
  );
});

const NO_TRACE = /\n\s+at |ERR_MODULE_NOT_FOUND/;
const has = (where: string, name: string): boolean => existsSync(join(where, 'node_modules', name, 'package.json'));

describe('the published package, on SQLite: the server', () => {
  it(
    'colloquy serve runs the bot on a SQLite file',
    async () => {
      const s = await serveIn(project, ['dist/bot.js'], { COLLOQUY_DB: join(project, 'data', 'app.db') });
      try {
        const health = await fetch(`${s.url}/healthz`);
        expect(health.status).toBe(200);
        expect(existsSync(join(project, 'data', 'app.db'))).toBe(true);
      } finally {
        await s.stop();
      }
    },
    SLOW,
  );

  it(
    'colloquy serve on PostgreSQL, pg not installed, says to install it',
    async () => {
      expect(has(project, 'pg')).toBe(false);
      const r = await run(process.execPath, ['node_modules/colloquy/bin/colloquy.js', 'serve', 'dist/bot.js'], project, { PORT: '0', COLLOQUY_DATABASE_URL: 'postgres://app:secret@127.0.0.1:1/none' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('colloquy serve: The PostgreSQL store needs the pg package, which is not installed: npm install pg');
      expect(r.stderr).not.toMatch(NO_TRACE);
    },
    SLOW,
  );
});

describe('the published package, authoring only (colloquy and xstate)', () => {
  it('installs neither database driver', () => {
    expect(has(authoring, 'colloquy')).toBe(true);
    expect(has(authoring, 'better-sqlite3')).toBe(false);
    expect(has(authoring, 'pg')).toBe(false);
  });

  it(
    'compiles a bot with strict tsc and skipLibCheck false',
    async () => {
      const r = await run(join(BIN, 'tsc'), ['-p', 'tsconfig.json'], authoring);
      expect(r.code, explain(r)).toBe(0);
    },
    SLOW,
  );

  it(
    "import 'colloquy' loads only xstate and zod: no driver, no HTTP server, no native module",
    async () => {
      const r = await run(process.execPath, ['what-loads.mjs', 'colloquy'], authoring);
      expect(r.code, explain(r)).toBe(0);
      const l = JSON.parse(r.stdout) as { resolved: string[]; cjs: string[]; builtins: string[]; shared: string[] };
      const packages = new Set([...l.resolved, ...l.cjs].map((f) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1]).filter((p) => p !== undefined));
      expect([...packages].sort()).toEqual(['colloquy', 'xstate', 'zod']);
      expect(l.builtins.filter((b) => /^NativeModule (_?https?|http2|_http_server|net|worker_threads|child_process)$/.test(b))).toEqual([]);
      expect(l.shared.filter((f) => f.endsWith('.node'))).toEqual([]);
    },
    SLOW,
  );
});

describe('the published package, on PostgreSQL without better-sqlite3', () => {
  it('has pg and not better-sqlite3, nor any @types for either', () => {
    expect(has(postgres, 'pg')).toBe(true);
    expect(has(postgres, 'better-sqlite3')).toBe(false);
    expect(has(postgres, '@types/pg')).toBe(false);
    expect(has(postgres, '@types/better-sqlite3')).toBe(false);
  });

  it(
    'compiles a bot and a server with strict tsc and skipLibCheck false',
    async () => {
      const r = await run(join(BIN, 'tsc'), ['-p', 'tsconfig.json'], postgres);
      expect(r.code, explain(r)).toBe(0);
    },
    SLOW,
  );

  it(
    'runs a server of its own on PostgreSQL',
    async () => {
      const r = await run(process.execPath, ['dist/pg-server.js'], postgres, { COLLOQUY_DATABASE_URL: await emptyDatabaseUrl() });
      expect(r.code, explain(r)).toBe(0);
      expect(JSON.parse(r.stdout.trim())).toEqual({ status: 200, ok: true, postgres: true });
    },
    SLOW,
  );

  it(
    'colloquy serve runs the bot on PostgreSQL',
    async () => {
      const s = await serveIn(postgres, ['dist/bot.js'], { COLLOQUY_DATABASE_URL: await emptyDatabaseUrl() });
      try {
        expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
      } finally {
        await s.stop();
      }
    },
    SLOW,
  );

  it(
    'colloquy serve on SQLite says to install better-sqlite3',
    async () => {
      const r = await run(process.execPath, ['node_modules/colloquy/bin/colloquy.js', 'serve', 'dist/bot.js'], postgres, { PORT: '0', COLLOQUY_DB: 'data/app.db' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('colloquy serve: The SQLite store needs the better-sqlite3 package, which is not installed: npm install better-sqlite3');
      expect(r.stderr).not.toMatch(NO_TRACE);
    },
    SLOW,
  );
});
