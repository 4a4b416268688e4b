/**
 * vitest global setup: a PostgreSQL server for the whole run, with a migrated template database
 * that test files copy (`freshDatabaseUrl()` in `./postgres.ts`).
 *
 * With `COLLOQUY_TEST_DATABASE_URL` set, that server is used (the URL's user must be allowed to
 * create databases); the databases this run creates are dropped at the end. Otherwise a throwaway
 * server is started from Debian's `/usr/lib/postgresql/<version>/bin` (initdb, pg_ctl) in a
 * temporary folder, on a free port on 127.0.0.1 only, trust auth, and stopped and removed at the
 * end. PostgreSQL refuses to run as root, so as root its binaries run as the `postgres` OS user.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migratePg } from '../../src/store/postgres/migrate.js';
import { PgDb } from '../../src/store/postgres/db.js';
import { tempDir } from './temp.js';

/** What test files get from `inject('postgres')`. */
export interface ProvidedPostgres {
  /** A URL of the server's maintenance database, for CREATE DATABASE. */
  readonly adminUrl: string;
  /** The migrated template every fresh database copies. */
  readonly template: string;
  /** The prefix of every database this run creates. */
  readonly prefix: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: ProvidedPostgres;
  }
}

interface Server {
  readonly adminUrl: string;
  stop(): void;
}

/** Starts (or connects to) the server and migrates the template; returns the teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env['COLLOQUY_TEST_DATABASE_URL']?.trim();
  const server = external ? { adminUrl: external, stop: () => undefined } : await startThrowaway();
  const prefix = `colloquy_test_${process.pid}`;
  const template = `${prefix}_template`;
  try {
    await admin(server.adminUrl, `CREATE DATABASE ${template}`);
    const db = new PgDb({ url: withDatabase(server.adminUrl, template), max: 1 });
    try {
      await migratePg(db);
    } finally {
      await db.end();
    }
  } catch (err) {
    server.stop();
    throw err;
  }
  project.provide('postgres', { adminUrl: server.adminUrl, template, prefix });
  return async () => {
    if (external) await dropRunDatabases(server.adminUrl, prefix).catch((e: unknown) => console.error(`could not drop the test databases: ${(e as Error).message}`));
    server.stop();
  };
}

/** Runs one statement on a connection of its own (closed after), as an operator would. */
export async function admin(url: string, sql: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

async function dropRunDatabases(url: string, prefix: string): Promise<void> {
  const { rows } = await admin(url, `SELECT datname FROM pg_database WHERE datname LIKE '${prefix}\\_%'`);
  for (const r of rows as { datname: string }[]) await admin(url, `DROP DATABASE IF EXISTS "${r.datname}" WITH (FORCE)`);
}

/** The same server URL naming another database. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0]) {
    throw new Error("No PostgreSQL server for the tests: install Debian's postgresql package (.ci/run does) or set COLLOQUY_TEST_DATABASE_URL to a server where this user may create databases.");
  }
  return join(root, versions[0], 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function startThrowaway(): Promise<Server> {
  const bin = binDir();
  const temp = tempDir('colloquy-pg-');
  const dir = temp.dir;
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gids = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (ids.status !== 0) throw new Error('Running as root, the test PostgreSQL needs the "postgres" OS user (Debian\'s postgresql package creates it).');
    chownSync(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args];
    const r = spawnSync(file, argv, { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}${logTail(dir)}`);
  };
  const data = join(dir, 'data');
  const port = await freePort();
  let started = false;
  const stop = () => {
    if (started) {
      started = false;
      try {
        run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
      } catch {
        /* already gone */
      }
    }
    temp.remove();
  };
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale', '--no-sync']);
    const opts = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`;
    started = true;
    run('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), '-o', opts]);
  } catch (err) {
    stop();
    throw err;
  }
  // If the run dies before its teardown, the server still goes with it.
  process.once('exit', stop);
  return { adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`, stop };
}

function logTail(dir: string): string {
  const log = join(dir, 'server.log');
  return existsSync(log) ? `\n${readFileSync(log, 'utf8').split('\n').slice(-15).join('\n')}` : '';
}
