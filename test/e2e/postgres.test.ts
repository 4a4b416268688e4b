/**
 * `colloquy` on PostgreSQL as a user runs it: real processes on a real server, COLLOQUY_DATABASE_URL,
 * `colloquy migrate`, and `colloquy db copy` moving a live SQLite conversation over.
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buttonReplyMessage, listReplyMessage, signBody, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/types.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { postWebhook, run, sandboxMessages, serve } from './cli.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

const SECRET = 'e2e-webhook-secret';
const PIZZA = '15550000001';
const USER = '5215598765432';
/** Trust auth ignores it, so it may stand for a real password: it must never be printed. */
const PASSWORD = 'pw-never-printed';

const withPassword = (url: string) => url.replace('postgres://postgres@', `postgres://postgres:${PASSWORD}@`);

const post = (url: string, message: object) => postWebhook(url, message, SECRET, PIZZA);

/** The sandbox's messages to the user, once there are at least `n`. */
const messagesToUser = (url: string, n: number) => sandboxMessages(url, USER, n, 15_000);

const started: { stop: (s?: NodeJS.Signals) => Promise<number | null>; proc: { exitCode: number | null } }[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) if (s.proc.exitCode === null) await s.stop('SIGKILL');
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
async function serveTracked(env: Record<string, string>) {
  const s = await serve(['bots'], { COLLOQUY_WEBHOOK_SECRET: SECRET, ...env });
  started.push(s);
  return s;
}
async function opened(location: string): Promise<Store> {
  const s = await openStore(location);
  stores.push(s);
  return s;
}

/** Everything a user's conversations hold, through the port, for comparing two databases. */
async function contents(store: Store) {
  const conversations = await store.conversations();
  return {
    conversations,
    transcripts: await Promise.all(conversations.map((c) => store.transcript(c.id))),
    timers: await Promise.all(conversations.map((c) => store.timers(c.id))),
    nextDue: await store.nextDue(),
  };
}

describe('colloquy on PostgreSQL', () => {
  it('serves from COLLOQUY_DATABASE_URL across a restart, and never prints the password', async () => {
    const url = withPassword(await freshDatabaseUrl());
    let s = await serveTracked({ COLLOQUY_DATABASE_URL: url });
    expect(s.stdout()).toContain('database    postgres://postgres:***@127.0.0.1');
    expect((await post(s.url, textMessage({ from: USER, text: 'hi' }))).status).toBe(200);
    let got = await messagesToUser(s.url, 1);
    expect(got[0]!.request).toMatchObject({ from: PIZZA, to: USER, type: 'contacts' });
    expect(await s.stop('SIGTERM')).toBe(0);

    s = await serveTracked({ COLLOQUY_DATABASE_URL: url });
    expect((await post(s.url, listReplyMessage({ from: USER, rowId: 'margherita', title: 'Margherita' }))).status).toBe(200);
    got = await messagesToUser(s.url, 1);
    expect((got[0]!.request['replyButtons'] as Record<string, unknown>)['headerImage']).toEqual({ link: 'https://images.example.com/pizza/margherita.jpg' });
    expect(await s.stop('SIGTERM')).toBe(0);
    for (const out of [s.stdout(), s.stderr()]) expect(out).not.toContain(PASSWORD);

    const migrated = await run(['migrate', '--json'], { COLLOQUY_DATABASE_URL: url });
    expect(migrated.code).toBe(0);
    expect(JSON.parse(migrated.stdout)).toMatchObject({ applied: [], alreadyApplied: expect.arrayContaining(['0001_initial.sql', '0004_user_number.sql']) });
    expect(migrated.stdout).not.toContain(PASSWORD);
    const conv = (await (await opened(url)).conversations({ user: USER }))[0];
    expect(conv).toMatchObject({ botId: 'pizza', status: 'active', version: 2 });
  });

  it('says plainly when PostgreSQL cannot be reached, without a stack trace or the password', async () => {
    const r = await run(['serve', 'bots'], { COLLOQUY_DATABASE_URL: `postgres://app:${PASSWORD}@127.0.0.1:1/colloquy` });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('colloquy serve: postgres://app:***@127.0.0.1:1/colloquy: nothing accepts connections at 127.0.0.1:1 (connection refused)');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr + r.stdout).not.toContain(PASSWORD);
  });

  it('a bad COLLOQUY_DATABASE_URL stops the start with its name', async () => {
    const r = await run(['migrate'], { COLLOQUY_DATABASE_URL: `mysql://app:${PASSWORD}@db/colloquy` });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('COLLOQUY_DATABASE_URL: must be a postgres:// or postgresql:// URL or a SQLite file path');
    expect(r.stderr).not.toContain(PASSWORD);
  });
});

describe('colloquy db copy', () => {
  it('moves a live SQLite conversation to PostgreSQL, where it carries on', async () => {
    const file = join(tmp.dir, 'to-copy.db');
    let s = await serveTracked({ COLLOQUY_DATABASE_URL: file });
    expect((await post(s.url, textMessage({ from: USER, text: 'hi' }))).status).toBe(200);
    expect((await post(s.url, listReplyMessage({ from: USER, rowId: 'margherita', title: 'Margherita' }))).status).toBe(200);
    await messagesToUser(s.url, 2);
    expect(await s.stop('SIGTERM')).toBe(0);

    const url = withPassword(await freshDatabaseUrl());
    const copied = await run(['db', 'copy', '--from', file, '--to', url]);
    expect(copied.stderr).toBe('');
    expect(copied.code).toBe(0);
    expect(copied.stdout).toMatch(
      /^Copied \d+ rows from .*to-copy\.db to postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+: agents 0, agent_sessions 0, conversations 1, flow_submits 0, handoffs 0, handoff_events 0, handoff_log 0, inbox 2, lanes 1, outbox \d+, statuses \d+, timers \d+\n/,
    );
    expect(copied.stdout).not.toContain(PASSWORD);
    expect(await contents(await opened(url))).toEqual(await contents(await opened(file)));
    await Promise.all(stores.splice(0).map((st) => st.close()));

    s = await serveTracked({ COLLOQUY_DATABASE_URL: url });
    expect((await post(s.url, buttonReplyMessage({ from: USER, buttonId: 'large', title: 'Large $15.20' }))).status).toBe(200);
    const got = await messagesToUser(s.url, 1);
    const flow = got[0]!.request as { flow: { action: { parameters: { flow_action_payload: unknown } } } };
    expect(flow.flow.action.parameters.flow_action_payload).toMatchObject({ screen: 'DELIVERY_ADDRESS', data: { product_name: 'Margherita' } });
    expect(await s.stop('SIGTERM')).toBe(0);
    // The sequences went on after the copied ids: the new rows were appended, none clashed.
    const store = await opened(url);
    const [conv] = await store.conversations({ user: USER });
    expect(conv).toMatchObject({ version: 3, state: JSON.stringify({ ordering: 'address' }) });
    const out = (await store.transcript(conv!.id)).filter((e) => e.direction === 'out').map((e) => e.record.id);
    expect(out).toEqual([...out].sort((a, b) => a - b));
    expect(new Set(out).size).toBe(out.length);
  });

  it('refuses a target that is not empty, and changes nothing there', async () => {
    const file = join(tmp.dir, 'small.db');
    expect((await run(['migrate'], { COLLOQUY_DATABASE_URL: file })).code).toBe(0);
    const url = await freshDatabaseUrl();
    const target = await opened(url);
    await target.addInbound({ botId: 'pizza', user: USER, providerId: 'already-here', source: 'api', event: { type: 'text', text: 'x' }, receivedAt: 1 });
    const r = await run(['db', 'copy', '--from', file, '--to', url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^colloquy db: postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+ is not empty \(rows in inbox, lanes\): copy only into a new database\n$/);
    expect((await target.inbound(1))?.providerId).toBe('already-here');
    expect(await target.inbound(2)).toBeUndefined();
  });

  it.each([
    [['db', 'copy', '--to', 'postgres://x@127.0.0.1/db'], 2, '--from and --to are both required'],
    [['db', 'copy', '--from', 'a.db', '--to', 'b.db'], 2, '--to must be a postgres:// or postgresql:// URL'],
    [['db', 'move', '--from', 'a.db', '--to', 'postgres://x@127.0.0.1/db'], 2, 'usage: colloquy db copy'],
    [['db', 'copy', '--from', '/nonexistent/colloquy.db', '--to', 'postgres://x@127.0.0.1:1/db'], 1, 'There is no SQLite database at /nonexistent/colloquy.db'],
  ])('colloquy %j exits %i saying what is wrong', async (args, code, message) => {
    const r = await run(args);
    expect(r.code).toBe(code);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
