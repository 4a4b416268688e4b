/**
 * Every database failure of the operator commands is a sentence: a wrong password, a missing
 * database, a refused connection, for `db copy`, `migrate`, `serve`, `check --db`, `conversations`
 * and `transcript`, run as the real `colloquy` child process. Each exits non-zero with one short
 * message on stderr, no stack trace and no password; `--debug` adds the stack.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { tempDir } from '../support/temp.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { run } from './cli.js';

const PASSWORD = 'hunter2-secret-pw';
const tmp = tempDir();
let source: string;
let wrongPassword: string;
let missingDatabase: string;
let refused: string;
let fake: Server;

/**
 * A loopback server speaking just enough of PostgreSQL's protocol to ask for a password and then
 * refuse it as a real server does (SQLSTATE 28P01); the test server itself trusts every login.
 */
async function refusingPasswords(): Promise<Server> {
  const server = createServer((socket: Socket) => {
    let stage = 0;
    socket.on('data', () => {
      if (stage++ === 0) {
        const ask = Buffer.alloc(9);
        ask.write('R', 0);
        ask.writeInt32BE(8, 1);
        ask.writeInt32BE(3, 5); // AuthenticationCleartextPassword
        socket.write(ask);
        return;
      }
      const fields = ['SFATAL', 'VFATAL', 'C28P01', 'Mpassword authentication failed for user "app"'].map((f) => Buffer.from(`${f}\0`));
      const payload = Buffer.concat([...fields, Buffer.from([0])]);
      const head = Buffer.alloc(5);
      head.write('E', 0);
      head.writeInt32BE(payload.length + 4, 1);
      socket.end(Buffer.concat([head, payload]));
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

beforeAll(async () => {
  fake = await refusingPasswords();
  wrongPassword = `postgres://app:${PASSWORD}@127.0.0.1:${(fake.address() as { port: number }).port}/colloquy`;
  const real = new URL(await freshDatabaseUrl());
  real.password = PASSWORD;
  real.pathname = '/no_such_database_here';
  missingDatabase = real.toString();
  refused = `postgres://app:${PASSWORD}@127.0.0.1:${await closedPort()}/colloquy`;
  source = join(tmp.dir, 'source.db');
  await (await openStore(source)).close();
});
afterAll(async () => {
  await new Promise<void>((r) => fake.close(() => r()));
  tmp.remove();
});

const COMMANDS: readonly [string, (url: string) => { args: string[]; env?: Record<string, string> }][] = [
  ['db copy', (url) => ({ args: ['db', 'copy', '--from', source, '--to', url] })],
  ['migrate', (url) => ({ args: ['migrate'], env: { COLLOQUY_DATABASE_URL: url } })],
  ['serve', (url) => ({ args: ['serve', 'bots'], env: { COLLOQUY_DATABASE_URL: url, PORT: '0' } })],
  ['check --db', (url) => ({ args: ['check', 'bots', '--db', url] })],
  ['conversations', (url) => ({ args: ['conversations', '--db', url] })],
  ['transcript', (url) => ({ args: ['transcript', '1', '--db', url] })],
];

const FAILURES: readonly [string, () => string, RegExp][] = [
  ['a wrong password', () => wrongPassword, /refused the password for user "app"/],
  ['a missing database', () => missingDatabase, /there is no database "no_such_database_here"/],
  ['a refused connection', () => refused, /nothing accepts connections at 127\.0\.0\.1:\d+/],
];

describe.each(COMMANDS)('colloquy %s', (_name, command) => {
  it.each(FAILURES)('with %s: one sentence, exit 1, no stack trace, no password', async (_what, url, sentence) => {
    const { args, env } = command(url());
    const r = await run(args, env ?? {});
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(sentence);
    expect(r.stderr).toMatch(/^colloquy [a-z]+: /m);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr.trim().split('\n').length).toBeLessThanOrEqual(3);
    expect(r.stderr + r.stdout).not.toContain(PASSWORD);
  });
});

describe('--debug', () => {
  it('adds the stack trace to the sentence', async () => {
    const r = await run(['db', 'copy', '--debug', '--from', source, '--to', wrongPassword]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refused the password for user "app"/);
    expect(r.stderr).toMatch(/\n\s+at /);
    expect(r.stderr).not.toContain(PASSWORD);
  });
});
