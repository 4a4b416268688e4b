/**
 * `colloquy agents remove` runs in an admin's shell, not the server's: whether the helpdesk
 * connector hears that the removed agent's claims went back (`handoff.claim_expired`) must not
 * depend on that shell's environment. A handoff the connector was told about is told again.
 */
import request from 'supertest';
import { afterEach, expect, it } from 'vitest';
import type { Io } from '../../src/cli/io.js';
import { ManualClock } from '../../src/conversation/clock.js';
import { main } from '../../src/cli/main.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp.js';
import { receiver, serve, walkToHandoff } from './helpers.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** `colloquy agents …` from an admin's shell: no server variables in its environment. */
async function agents(db: string, args: readonly string[]): Promise<string> {
  let out = '';
  const io: Io = { out: (t) => void (out += t), err: () => undefined, env: {}, json: true };
  expect(await main(['agents', ...args, '--db', db, '--json'], io)).toBe(0);
  return out;
}

it("removing an agent from the command line tells the server's connector that its claim went back", async () => {
  const hook = await receiver();
  cleanup.push(() => hook.close());
  const t = tempDir('colloquy-review-');
  cleanup.push(() => t.remove());
  const db = t.path('bot.db');
  // The server's clock reads the wall clock's time, as the command's does.
  const { server: s, clock } = await serve({ db, hook: hook.url, clock: new ManualClock(Date.now()) });
  cleanup.push(() => s.close());

  const { token } = JSON.parse(await agents(db, ['add', 'ana'])) as { token: string };
  const id = await walkToHandoff(s);
  await request(s.url).post(`/agent/handoffs/${id}/claim`).set('authorization', `Bearer ${token}`).send({}).expect(200);
  await eventually(() => expect(hook.got.map((g) => g.body.type)).toContain('handoff.claimed'));

  expect(JSON.parse(await agents(db, ['remove', 'ana']))).toMatchObject({ removed: true, claims: 1 });
  expect((await s.store.openHandoff(id))!.state).toBe('waiting');
  clock.advance(60_000); // the server's worker polls for work other processes queued
  await eventually(() => expect(hook.got.map((g) => g.body.type)).toContain('handoff.claim_expired'));
});
