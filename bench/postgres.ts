/**
 * A throwaway PostgreSQL server for the bench: `initdb` into a temporary folder, `pg_ctl start` on a
 * free port listening on 127.0.0.1 only (no Unix socket outside that folder), trust authentication
 * for the loopback (nothing else can reach it), and `pg_ctl stop` plus removal of the folder at the
 * end, also on error, Ctrl-C or exit (through bench/ipc.ts's cleanups). Run as root, the server runs
 * as the `postgres` OS user (PostgreSQL refuses root).
 *
 * Uses Debian's binaries (`/usr/lib/postgresql/<version>/bin`, the highest version found), or the
 * folder named by `COLLOQUY_BENCH_PG_BIN`. The server runs with PostgreSQL's defaults (fsync and
 * synchronous commit on, as a deployment would) unless `BENCH_PG_OPTIONS` adds settings, e.g.
 * `-c synchronous_commit=off` (closer to SQLite's WAL with synchronous=NORMAL).
 */
import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onExit } from './ipc.js';

/** A running throwaway server. */
export interface ThrowawayPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly port: number;
  /** The server's major version, e.g. "15". */
  readonly version: string;
  /** The settings added with `BENCH_PG_OPTIONS` (empty: PostgreSQL's defaults). */
  readonly options: string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): string;
  /** Stops the server (fast shutdown) and removes its folder. Idempotent. */
  stop(): void;
}

/** Why the bench cannot start PostgreSQL here, or undefined when it can. */
export function postgresUnavailable(): string | undefined {
  const bin = findBin();
  if (bin === undefined) return 'no PostgreSQL server binaries (looked in /usr/lib/postgresql/*/bin; set COLLOQUY_BENCH_PG_BIN, or apt-get install postgresql)';
  if (isRoot() && lookupUser('postgres') === undefined) return 'running as root and there is no "postgres" OS user to run the server as';
  return undefined;
}

function findBin(): string | undefined {
  const given = process.env['COLLOQUY_BENCH_PG_BIN'];
  if (given) return existsSync(join(given, 'pg_ctl')) ? given : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

const isRoot = (): boolean => process.getuid?.() === 0;

function lookupUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** `BENCH_PG_OPTIONS`: `-c name=value` settings only; throws naming the variable otherwise. */
export function extraOptions(): string {
  const v = (process.env['BENCH_PG_OPTIONS'] ?? '').trim();
  if (v !== '' && !/^(-c [a-z_.]+=[A-Za-z0-9_.]+)(\s+-c [a-z_.]+=[A-Za-z0-9_.]+)*$/.test(v)) throw new Error(`BENCH_PG_OPTIONS must be "-c name=value" settings separated by spaces, got "${v}"`);
  return v;
}

/** Starts a throwaway PostgreSQL; throws with the tool's output when it cannot. */
export async function startPostgres(): Promise<ThrowawayPostgres> {
  const why = postgresUnavailable();
  if (why !== undefined) throw new Error(why);
  const extra = extraOptions();
  const bin = findBin()!;
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-bench-pg-'));
  const data = join(dir, 'data');
  const owner = isRoot() ? lookupUser('postgres') : undefined;
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  // As root, run the server tools as the postgres user; otherwise as ourselves.
  const run = (tool: string, args: string[], opts: ExecFileSyncOptions = {}) => {
    const [cmd, argv] = owner === undefined ? [join(bin, tool), args] : ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]];
    return execFileSync(cmd, argv, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000, ...opts });
  };
  let started = false;
  const stop = () => {
    if (started) {
      try {
        run('pg_ctl', ['stop', '-D', data, '-m', 'fast', '-w', '-t', '20']);
      } catch {
        try {
          run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
        } catch {
          /* gone */
        }
      }
      started = false;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const removeCleanup = onExit(stop);
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale', '--no-instructions']);
    let port = 0;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const options = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories='${dir}' -c max_connections=200 -c shared_buffers=128MB ${extra}`.trim();
      try {
        started = true;
        run('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), '-o', options]);
        break;
      } catch (err) {
        started = false;
        if (attempt >= 3) throw err; // the port was taken between the probe and the start, three times
      }
    }
    const version = String(run('pg_ctl', ['--version']))
      .trim()
      .replace(/^.*?(\d+)(\.\d+)*\s*.*$/, '$1');
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    return {
      url,
      port,
      version,
      options: extra,
      createDatabase: (name) => {
        if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: "${name}"`);
        execFileSync(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
        // BENCH_PG_SOCKET=1: Colloquy reaches the server through its Unix socket instead of TCP on the loopback.
        return process.env['BENCH_PG_SOCKET'] === '1' ? `postgres://postgres@${encodeURIComponent(dir)}:${port}/${name}` : `postgres://postgres@127.0.0.1:${port}/${name}`;
      },
      stop: () => {
        stop();
        removeCleanup();
      },
    };
  } catch (err) {
    stop();
    removeCleanup();
    const e = err as { stderr?: Buffer; message?: string };
    throw new Error(
      `could not start PostgreSQL: ${String(e.stderr ?? e.message ?? err)
        .trim()
        .slice(0, 500)}`,
    );
  }
}
