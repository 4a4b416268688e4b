/**
 * The package as a dependent project gets it: `npm pack` (dist/ built by prepack), publint and
 * arethetypeswrong on the tarball, then the tarball installed into a fresh project beside xstate
 * and express with the `allowScripts` the README gives, a bot, a server, a harness script and
 * type checks compiled by strict tsc with `skipLibCheck: false`, and all of it run.
 *
 * The registry is the only network it uses (`--prefer-offline`, so mostly the npm cache). The
 * install skips scripts: better-sqlite3 would compile for minutes without a prebuilt binary, so
 * the project gets the binary this repository built, for the same better-sqlite3 version.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'node_modules/.bin');
const FIXTURE = join(ROOT, 'test/fixtures/newcomer');
const MANIFEST = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
const SQLITE_VERSION = (JSON.parse(readFileSync(join(ROOT, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string }).version;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end; never throws for a non-zero exit (the test looks at the code). */
function run(cmd: string, args: readonly string[], cwd: string): Promise<Run> {
  // npm's own variables (set when this runs under `npm test`) would describe this repository to the nested npm.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_(package|lifecycle)_/.test(k)));
  return new Promise((done) => {
    execFile(cmd, args, { cwd, env: { ...env, NO_COLOR: '1' }, maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
      done({ code: err ? Number((err as { code?: unknown }).code ?? 1) || 1 : 0, stdout, stderr });
    });
  });
}

const explain = (r: Run): string => `exit ${r.code}\n${r.stdout}\n${r.stderr}`;

/** A whole type check of the project and its dependencies' declarations takes a while on a busy machine. */
const SLOW = 180_000;

let dir: string;
let tarball: string;
let project: string;
let install: Run;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-published-'));
  const pack = await run('npm', ['pack', '--pack-destination', dir], ROOT);
  const packed = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
  if (pack.code !== 0 || packed.length !== 1) throw new Error(`npm pack failed: ${explain(pack)}`);
  tarball = join(dir, packed[0]!);

  project = join(dir, 'newcomer');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'newcomer', version: '1.0.0', private: true, type: 'module', allowScripts: { 'better-sqlite3': true }, overrides: { 'better-sqlite3': SQLITE_VERSION } }, null, 2),
  );
  install = await run('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', tarball, 'xstate', 'express'], project);
  if (install.code !== 0) throw new Error(`npm install failed: ${explain(install)}`);
  const release = 'node_modules/better-sqlite3/build/Release';
  mkdirSync(join(project, release), { recursive: true });
  copyFileSync(join(ROOT, release, 'better_sqlite3.node'), join(project, release, 'better_sqlite3.node'));

  cpSync(FIXTURE, join(project, 'src'), { recursive: true });
  const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, outDir: 'dist', rootDir: 'src' };
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }, null, 2));
}, 240_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

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
