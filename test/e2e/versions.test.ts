/**
 * Changing a bot under `colloquy serve`, as an operator would: real processes on one SQLite file,
 * signed webhooks, `colloquy check --db` before each deploy.
 */
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buttonReplyMessage, signBody, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp.js';
import { run, serve } from './cli.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

const SECRET = 'e2e-versions-secret';
const fixture = (f: string) => join('test', 'fixtures', 'versions', f);
const [ANA, BEN, CLEO, DAN] = ['5215500000301', '5215500000302', '5215500000303', '5215500000304'];

async function post(url: string, message: object): Promise<number> {
  const body = JSON.stringify(webhookPayload({ messages: [message as never] }));
  return (await fetch(`${url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signBody(SECRET, body) }, body })).status;
}

const tap = (from: string, id: string) => buttonReplyMessage({ from, buttonId: id, title: id });

/** The bodies the sandbox received for a user, oldest first, once there are at least `n`. */
function bodies(url: string, user: string, n: number): Promise<string[]> {
  return eventually(
    async () => {
      const got = (await (await fetch(`${url}/sandbox/_sandbox/messages?to=${user}`)).json()) as { request: { replyButtons?: { body: string }; text?: string; message?: string } }[];
      const out = got.map((m) => m.request.replyButtons?.body ?? JSON.stringify(m.request));
      expect(out.length, JSON.stringify(out)).toBeGreaterThanOrEqual(n);
      return out;
    },
    { what: `${n} messages to ${user}`, timeoutMs: 10_000, intervalMs: 25 },
  );
}

const started: { stop: (s?: NodeJS.Signals) => Promise<number | null>; proc: { exitCode: number | null } }[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) if (s.proc.exitCode === null) await s.stop('SIGKILL');
});
async function serving(files: string[], env: Record<string, string>) {
  const s = await serve(files, env);
  started.push(s);
  return s;
}

describe('changing a bot under colloquy serve', () => {
  it('v2 migrates the conversations v1 left; check --db names what v3 would strand; v1 and v2 served side by side pin', async () => {
    const db = join(tmp.dir, 'versions.db');
    const env = { COLLOQUY_DB: db, COLLOQUY_WEBHOOK_SECRET: SECRET };

    let s = await serving([fixture('shop-v1.ts')], env);
    for (const u of [ANA, BEN, CLEO]) expect(await post(s.url, textMessage({ from: u, text: 'hi' }))).toBe(200);
    for (const u of [ANA, BEN]) expect(await post(s.url, tap(u, 'order'))).toBe(200);
    expect(await post(s.url, tap(BEN, 'large'))).toBe(200);
    expect(await bodies(s.url, BEN, 3)).toHaveLength(3);
    expect(await bodies(s.url, ANA, 2)).toHaveLength(2);
    expect(await s.stop('SIGTERM')).toBe(0);

    // Before deploying v2: nothing stranded.
    const ok = await run(['check', fixture('shop-v2.ts'), '--db', db]);
    expect([ok.code, ok.stdout]).toEqual([0, expect.stringContaining('3 live conversations checked: none stranded.')]);

    s = await serving([fixture('shop-v2.ts')], env);
    expect(await post(s.url, tap(ANA, 'large'))).toBe(200); // ANA waited in ordering.size, now ordering.pickSize
    expect((await bodies(s.url, ANA, 1)).at(-1)).toBe('Crust for your large pizza?');
    expect(await post(s.url, tap(CLEO, 'order'))).toBe(200); // CLEO waited in menu
    expect((await bodies(s.url, CLEO, 1)).at(-1)).toBe('Which size? (pickSize)');
    expect(await s.stop('SIGTERM')).toBe(0);
    expect(s.stderr()).toContain('conversation 1 migrated from version 1 to 2');

    // Before deploying v3 (no ordering.crust): ANA (now v2) and BEN (still v1) would be stranded.
    const bad = await run(['check', fixture('shop-v3.ts'), '--db', db]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/shop v1 › ordering\.crust › stranded: 1 live conversation \(2\)/);
    expect(bad.stdout).toMatch(/shop v2 › ordering\.crust › stranded: 1 live conversation \(1\)/);

    // Pinning: v2 without a migration next to v1. BEN stays on v1; DAN starts on v2.
    const pinnedDb = join(tmp.dir, 'pinned.db');
    const penv = { COLLOQUY_DB: pinnedDb, COLLOQUY_WEBHOOK_SECRET: SECRET };
    s = await serving([fixture('shop-v1.ts')], penv);
    expect(await post(s.url, textMessage({ from: BEN, text: 'hi' }))).toBe(200);
    expect(await post(s.url, tap(BEN, 'order'))).toBe(200);
    expect(await bodies(s.url, BEN, 2)).toHaveLength(2);
    expect(await s.stop('SIGTERM')).toBe(0);
    s = await serving([fixture('shop-v1.ts'), fixture('shop-v2-pinned.ts')], penv);
    expect(s.stdout()).toMatch(/serving 2 bots: shop \(.*\), shop v2 \(/);
    expect(await post(s.url, tap(BEN, 'small'))).toBe(200);
    expect((await bodies(s.url, BEN, 1)).at(-1)).toBe('Crust for your small pizza?');
    expect(await post(s.url, textMessage({ from: DAN, text: 'hi' }))).toBe(200);
    expect(await post(s.url, tap(DAN, 'order'))).toBe(200);
    expect((await bodies(s.url, DAN, 2)).at(-1)).toBe('Which size? (pickSize)');
    expect(await s.stop('SIGTERM')).toBe(0);
    const list = await run(['conversations', '--db', pinnedDb, '--list', '--json']);
    expect(JSON.parse(list.stdout)).toEqual([
      expect.objectContaining({ user: BEN, version: 1, state: 'ordering.crust' }),
      expect.objectContaining({ user: DAN, version: 2, state: 'ordering.pickSize' }),
    ]);
  });
});
