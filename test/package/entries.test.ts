/**
 * What each entry loads, seen from a fresh Node process (test/fixtures/what-loads.mjs): `colloquy`
 * is what a bot author imports, so it must load no database driver, no HTTP server or client and
 * no native module; `colloquy/server` runs bots, but its store's engine loads only when a store
 * of that kind opens. Run against the sources (the `colloquy-source` condition, through tsx).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const PROBE = join(ROOT, 'test', 'fixtures', 'what-loads.mjs');

interface Loaded {
  readonly resolved: readonly string[];
  readonly cjs: readonly string[];
  readonly builtins: readonly string[];
  readonly shared: readonly string[];
}

function whatLoads(specifier: string): Promise<Loaded> {
  return new Promise((done, fail) => {
    execFile(process.execPath, ['--conditions=colloquy-source', '--import', 'tsx', PROBE, specifier], { cwd: ROOT }, (err, stdout, stderr) => {
      if (err) fail(new Error(`${err.message}\n${stderr}`));
      else done(JSON.parse(stdout) as Loaded);
    });
  });
}

const packagesIn = (l: Loaded): Set<string> => {
  const out = new Set<string>();
  for (const f of [...l.resolved, ...l.cjs]) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f);
    if (m) out.add(m[1]!);
  }
  return out;
};
/** Node's own modules a bot file has no use for: servers, sockets, threads, processes. */
const SERVER_BUILTINS = ['NativeModule http', 'NativeModule https', 'NativeModule http2', 'NativeModule _http_server', 'NativeModule net', 'NativeModule worker_threads', 'NativeModule child_process'];

describe('what an entry loads', () => {
  it('colloquy: only xstate and zod beside its own files; no driver, no HTTP, no native module', async () => {
    const l = await whatLoads('colloquy');
    expect([...packagesIn(l)].sort()).toEqual(['xstate', 'zod']);
    expect(l.builtins.filter((b) => SERVER_BUILTINS.includes(b))).toEqual([]);
    expect(l.shared.filter((f) => f.endsWith('.node'))).toEqual([]);
    const own = l.resolved.filter((u) => u.includes('/src/')).map((u) => u.slice(u.indexOf('/src/') + 1));
    expect(own).toContain('src/index.ts');
    expect(own.filter((f) => /^src\/(store|transport|webhook|agent|sandbox|simulator|cli)\/|^src\/(server|metrics|config)\.ts$/.test(f))).toEqual([]);
  });

  it('colloquy/server: Express and the rest, but neither database driver until a store opens', async () => {
    const l = await whatLoads('colloquy/server');
    const packages = packagesIn(l);
    // The probe sees what the authoring entry was spared: the check above could fail.
    expect(packages).toContain('express');
    expect(packages).toContain('prom-client');
    expect(packages).not.toContain('better-sqlite3');
    expect(packages).not.toContain('pg');
    expect(l.shared.filter((f) => f.endsWith('.node'))).toEqual([]);
  });

  it.each(['colloquy/store', 'colloquy/sqlite', 'colloquy/postgres'])('%s loads no driver on import', async (specifier) => {
    const packages = packagesIn(await whatLoads(specifier));
    expect(packages).not.toContain('better-sqlite3');
    expect(packages).not.toContain('pg');
  });
});
