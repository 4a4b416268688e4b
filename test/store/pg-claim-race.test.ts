/**
 * Claims racing on PostgreSQL: two stores (two pools: separate connections, as two processes
 * have) claim the same backlog at once, round after round, settling what they get as a fast
 * provider would, so that rows change between one claim's snapshot and its row locks. No row may
 * be held by both at once; a row taken from a lapsed claim counts one resend, once. Also: a lease
 * is compared with the database's clock, never the `now` a claimant passes.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Claimant, Store } from '../../src/store/types.js';
import { postgres, T0 } from './helpers.js';

const CONVERSATIONS = 30;
const ROUNDS = 25;
const FAR = T0 + 10 * 365 * 86_400_000;

let url: string;
let sql: pg.Client;
let one: Store;
let two: Store;

// A database per test; the stores are closed after each test by the helpers.
beforeEach(async () => {
  url = await postgres.fresh();
  one = await postgres.open(url);
  two = await postgres.open(url);
  sql = new pg.Client({ connectionString: url });
  await sql.connect();
  await sql.query(`INSERT INTO conversations (bot_id, user_number, status, snapshot, state, version, flow_token, created_at, updated_at, last_activity_at)
    SELECT 'race', 'u' || g, 'active', NULL, 's', 1, 'race-' || g, 0, 0, 0 FROM generate_series(1, ${CONVERSATIONS}) g`);
});

afterEach(async () => {
  await sql.end();
});

/**
 * Every conversation: a row a dead process left `sending` (lapsed long ago), then two pending ones;
 * every conversation's handoff: an event left `sending` the same way, then two pending ones.
 */
async function backlog(): Promise<void> {
  await sql.query('DELETE FROM outbox');
  await sql.query('DELETE FROM handoff_events');
  await sql.query('DELETE FROM handoffs');
  for (const state of ['sending', 'pending', 'pending']) {
    await sql.query(
      `INSERT INTO outbox (conversation_id, bot_id, user_number, kind, message, channel, request, state, owner, lease_until, claim, next_attempt_at, created_at)
      SELECT c.id, c.bot_id, c.user_number, 'text', '{}', 'interactive', '{}', $1, CASE WHEN $1 = 'sending' THEN 'dead' END,
        CASE WHEN $1 = 'sending' THEN 0 END, CASE WHEN $1 = 'sending' THEN 'dead-claim' END, $2, $2 FROM conversations c ORDER BY c.id`,
      [state, T0],
    );
  }
  await sql.query(`INSERT INTO handoffs (conversation_id, bot_id, user_number, state, started_at) SELECT id, bot_id, user_number, 'waiting', 0 FROM conversations ORDER BY id`);
  for (const [n, state] of ['sending', 'pending', 'pending'].entries()) {
    await sql.query(
      `INSERT INTO handoff_events (event_id, handoff_id, type, payload, state, owner, lease_until, claim, next_attempt_at, created_at)
      SELECT 'ev-' || h.id || '-' || $3::int, h.id, 'handoff.message', '{}', $1, CASE WHEN $1 = 'sending' THEN 'dead' END,
        CASE WHEN $1 = 'sending' THEN 0 END, CASE WHEN $1 = 'sending' THEN 'dead-claim' END, $2, $2 FROM handoffs h ORDER BY h.id`,
      [state, T0, n],
    );
  }
}

/** A claimant that takes what it can until nothing is left for it, settling each item at once (every third one for a retry far ahead). */
async function drain(store: Store, who: Claimant, kind: 'send' | 'event', taken: Map<number, string[]>, more: () => boolean = () => false): Promise<void> {
  for (let empty = 0; empty < 3 || more(); ) {
    const got = kind === 'send' ? await store.claim(who, { kind, limit: 4, now: T0 }) : await store.claim(who, { kind, limit: 4, now: T0 });
    empty = got.length === 0 ? empty + 1 : 0;
    for (const item of got) {
      taken.set(item.id, [...(taken.get(item.id) ?? []), who.owner]);
      const retry = item.id % 3 === 0;
      const settled =
        kind === 'send'
          ? await store.settleSend(item.id, item.claim!, retry ? { kind: 'retry', at: FAR, error: 'later' } : { kind: 'sent', record: { state: 'sent', providerId: `p-${item.id}` } }, T0)
          : await store.settleEvent(item.id, item.claim!, retry ? { sent: false, error: 'later', retryAt: FAR } : { sent: true }, T0);
      expect(settled, `${who.owner} settles ${kind} ${item.id}`).toBe(true);
    }
  }
}

describe('claims racing on two connections (postgres)', () => {
  for (const kind of ['send', 'event'] as const) {
    it(`never hands one ${kind} to both, lapsed claims included, round after round`, async () => {
      const table = kind === 'send' ? 'outbox' : 'handoff_events';
      for (let round = 0; round < ROUNDS; round++) {
        await backlog();
        const taken = new Map<number, string[]>();
        const a = { owner: `a-${round}`, leaseMs: 60_000, lapsed: true };
        const b = { owner: `b-${round}`, leaseMs: 60_000, lapsed: true };
        await Promise.all([drain(one, a, kind, taken), drain(two, b, kind, taken)]);
        const twice = [...taken].filter(([, owners]) => owners.length > 1);
        expect(twice, `round ${round}: items claimed twice`).toEqual([]);
        // Each line's head was taken in turn: the lapsed one, the next, and the one after it unless a retry stopped the line.
        const { rows } = await sql.query(`SELECT state, COUNT(*)::int AS n FROM ${table} GROUP BY state ORDER BY state`);
        expect(
          rows.find((r) => r['state'] === 'sending'),
          `round ${round}: rows left sending`,
        ).toBeUndefined();
        expect(taken.size).toBeGreaterThanOrEqual(CONVERSATIONS);
      }
      if (kind === 'send') {
        // The last round's lapsed rows were each taken once more: one resend and one more attempt each.
        const { rows } = await sql.query(`SELECT resends::int AS resends, attempts::int AS attempts FROM outbox WHERE claim IS NULL AND id IN (SELECT MIN(id) FROM outbox GROUP BY conversation_id)`);
        expect(rows).toHaveLength(CONVERSATIONS);
        for (const r of rows) expect(r).toEqual({ resends: 1, attempts: 1 });
      }
    });
  }

  it('claims given up while two others race for them: each taken by one, counted as one resend', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      await backlog();
      await sql.query(`UPDATE outbox SET state = 'pending', owner = NULL, lease_until = NULL, claim = NULL`);
      const holder = { owner: `holder-${round}`, leaseMs: 60_000, lapsed: true };
      const held = await one.claim(holder, { kind: 'send', limit: 1_000, now: T0 });
      expect(held).toHaveLength(CONVERSATIONS);
      const taken = new Map<number, string[]>();
      const a = { owner: `a-${round}`, leaseMs: 60_000, lapsed: true };
      const b = { owner: `b-${round}`, leaseMs: 60_000, lapsed: true };
      // The holder gives its claims up while the others are already claiming (and until it has).
      let givenUp = false;
      const more = () => !givenUp;
      await Promise.all([
        drain(one, a, 'send', taken, more),
        drain(two, b, 'send', taken, more),
        one.renew(holder.owner, 0).then(() => {
          givenUp = true;
        }),
      ]);
      // A claim whose transaction began before the give-up committed reads the lease on its own
      // (earlier) clock and passes the row by; the drains may stop then. One more look takes what
      // was left: every given-up row must be claimable, and by one claimant only.
      await drain(two, b, 'send', taken);
      expect(
        [...taken].filter(([, owners]) => owners.length > 1),
        `round ${round}: sends claimed twice`,
      ).toEqual([]);
      const { rows } = await sql.query(`SELECT id, resends::int AS resends FROM outbox ORDER BY id`);
      const heldIds = new Set(held.map((r) => r.id));
      for (const r of rows) expect(r, `round ${round}`).toEqual({ id: r['id'], resends: heldIds.has(Number(r['id'])) ? 1 : 0 });
    }
  });

  it('never hands one lane to both, lapsed claims included', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      await sql.query('DELETE FROM lanes');
      // Half the lanes held by a dead process (lapsed), half free; all with work.
      await sql.query(`INSERT INTO lanes (bot_id, user_number, owner, lease_until, fence, work_seq, done_seq)
        SELECT 'race', 'u' || g, CASE WHEN g % 2 = 0 THEN 'dead' END, CASE WHEN g % 2 = 0 THEN 0 END, 1, 1, 0 FROM generate_series(1, ${CONVERSATIONS}) g`);
      const taken = new Map<string, string[]>();
      const race = async (store: Store, owner: string) => {
        for (let empty = 0; empty < 3; ) {
          const got = await store.claim({ owner, leaseMs: 60_000, lapsed: true }, { kind: 'lane', limit: 3, now: T0 });
          empty = got.length === 0 ? empty + 1 : 0;
          for (const c of got) taken.set(c.key.user, [...(taken.get(c.key.user) ?? []), owner]);
        }
      };
      await Promise.all([race(one, `a-${round}`), race(two, `b-${round}`)]);
      expect(
        [...taken].filter(([, o]) => o.length > 1),
        `round ${round}: lanes claimed twice`,
      ).toEqual([]);
      expect(taken.size).toBe(CONVERSATIONS);
      // Each lane's fence says it changed owner exactly once: a second take would have bumped it again.
      const { rows } = await sql.query(`SELECT DISTINCT fence::int AS fence FROM lanes`);
      expect(rows).toEqual([{ fence: 2 }]);
    }
  });
});

describe('lane claims racing through every path (postgres)', () => {
  it('an inbound claiming its lane, a claim by key (batched) and a claim of lanes with work never grant one lane to two owners', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      await sql.query('DELETE FROM lanes');
      await sql.query(`INSERT INTO lanes (bot_id, user_number, owner, lease_until, fence, work_seq, done_seq)
        SELECT 'race', 'u' || g, 'dead', 0, 1, 1, 0 FROM generate_series(1, ${CONVERSATIONS}) g`);
      const a = { owner: `a-${round}`, leaseMs: 60_000, lapsed: true };
      const b = { owner: `b-${round}`, leaseMs: 60_000, lapsed: true };
      const keys = Array.from({ length: CONVERSATIONS }, (_, i) => ({ botId: 'race', user: `u${i + 1}` }));
      const granted = new Map<string, string[]>();
      const grant = (user: string, owner: string) => granted.set(user, [...new Set([...(granted.get(user) ?? []), owner])]);
      const [inbounds, byKey, withWork] = await Promise.all([
        Promise.all(keys.map((k, i) => one.addInbound({ ...k, providerId: `race-${round}-${i}`, source: 'whatsapp', event: { type: 'text' }, receivedAt: T0 }, a))),
        Promise.all(keys.map((k) => two.claim(b, { kind: 'lane', limit: 1, now: T0, key: k }))),
        two.claim(b, { kind: 'lane', limit: CONVERSATIONS, now: T0 }),
      ]);
      inbounds.forEach((r, i) => r.claim && grant(keys[i]!.user, a.owner));
      for (const c of [...byKey.flat(), ...withWork]) grant(c.key.user, b.owner);
      expect(
        [...granted].filter(([, owners]) => owners.length > 1),
        `round ${round}: lanes granted to both`,
      ).toEqual([]);
      expect(granted.size).toBe(CONVERSATIONS);
      // Whoever got a lane holds it, and took it over from the dead owner once: the fence moved by one.
      const { rows } = await sql.query(`SELECT user_number, owner, fence::int AS fence FROM lanes ORDER BY user_number`);
      for (const r of rows) expect(r, `round ${round}`).toEqual({ user_number: r['user_number'], owner: granted.get(r['user_number'] as string)![0], fence: 2 });
    }
  });
});

describe('leases on the database’s clock (postgres)', () => {
  it('a claimant whose clock is years ahead takes no live claim, of any kind', async () => {
    await backlog();
    const a = { owner: 'clock-a', leaseMs: 60_000, lapsed: true };
    const sends = await one.claim(a, { kind: 'send', limit: 100, now: T0 });
    const events = await one.claim(a, { kind: 'event', limit: 100, now: T0 });
    expect(sends).toHaveLength(CONVERSATIONS);
    expect(events).toHaveLength(CONVERSATIONS);
    const ahead = { owner: 'clock-b', leaseMs: 60_000, lapsed: true };
    expect(await two.claim(ahead, { kind: 'send', limit: 100, now: FAR })).toEqual([]);
    expect(await two.claim(ahead, { kind: 'event', limit: 100, now: FAR })).toEqual([]);
    // Given up by its owner (a lease of 0), the same rows are taken at once, each counted as a resend.
    await one.renew(a.owner, 0);
    const again = await two.claim(ahead, { kind: 'send', limit: 100, now: T0 });
    expect(again.map((r) => r.id).sort()).toEqual(sends.map((r) => r.id).sort());
    for (const r of again) expect(r).toMatchObject({ resends: sends.find((s) => s.id === r.id)!.resends + 1, attempts: 2 });
    expect(await two.claim(ahead, { kind: 'event', limit: 100, now: T0 })).toHaveLength(CONVERSATIONS);
    // Every lease is the database's now plus the lease, not the claimant's now.
    const { rows } = await sql.query(`SELECT COUNT(*)::int AS n FROM outbox WHERE state = 'sending'
      AND lease_until BETWEEN (EXTRACT(EPOCH FROM now()) * 1000)::bigint AND (EXTRACT(EPOCH FROM now()) * 1000)::bigint + 60000`);
    expect(rows[0]!['n']).toBe(CONVERSATIONS);
  });
});
