/** copySqliteToPostgres: every table and row, ids kept, sequences moved on, a non-empty target refused. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { copySqliteToPostgres } from '../../src/store/copy.js';
import type { Store } from '../../src/store/types.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { ALICE, BOB, NO_TIMERS, T0, WORKER, allInbound, allOutbound, claimLanes, claimSends, inbound, postgres, sent, sqlite, tempDir, text, turn } from './helpers.js';

/** A SQLite file with a bit of everything: two conversations (one ended), a fallback, statuses, a timer, a failed inbound, a claimed handoff with an agent's message and connector events. */
async function filled(): Promise<string> {
  const file = join(tempDir(), 'source.db');
  const s = await sqlite.open(file);
  const a = await s.addInbound(inbound({ providerId: 'w1' }));
  await s.commitTurn(
    turn({ inboxId: a.id, outbox: [text('one'), text('two')], timers: { ...NO_TIMERS, upsert: [{ key: 'remind', stateNode: null, event: { type: 'remind' }, fireAt: T0 + 9 }] }, now: T0 }),
  );
  const [row] = await claimSends(s, T0, 1);
  const follow = { fallback: text('one by sms', { kind: 'sms', channel: 'sms' }), channel: 'sms' } as const;
  await s.settleSend(row!.id, row!.claim!, { kind: 'failed', record: { state: 'failed', error: 'not on WhatsApp', errorCode: '131026' }, follow }, T0 + 1);
  await s.commitTurn(turn({ key: BOB, status: 'done', outbox: [text('bye')], now: T0 + 2 }));
  // ALICE's fallback stays in flight: its claim (owner, lease, token) is copied too.
  const [bye] = (await claimSends(s, T0 + 2)).filter((r) => r.user === BOB.user);
  await sent(s, bye!, { state: 'sent', providerId: 'wamid.bye', response: { ok: true } }, T0 + 3);
  await s.addStatus({ providerMessageId: 'wamid.bye', status: 'read', receivedAt: T0 + 4, raw: { x: 1 } });
  const bad = await s.addInbound(inbound({ ...BOB, providerId: 'w-bad' }));
  await s.failInbound(bad.id, 'the bot threw', T0 + 5);
  await s.addInbound(inbound({ providerId: 'w-pending', receivedAt: T0 + 6 }));
  await s.commitTurn(turn({ conversationId: 1, expectedVersion: 1, handoff: { open: { reason: 'human', timeoutMs: 60_000 } }, notifyHandoffs: true, now: T0 + 7 }));
  await s.addAgent('ana', 'hash-of-anas-token', T0);
  await s.createAgentSession('hash-of-a-session', 'ana', 'csrf', T0, T0 + 3_600_000);
  await s.claimHandoff(1, 'ana', { now: T0 + 8, notify: true, via: 'token' });
  await s.addHandoffNote(1, { name: 'ana', via: 'session' }, 'VIP', T0 + 8);
  await s.addAgentMessage({ conversationId: 1, agent: 'ana', outbound: text('ana here'), idempotencyKey: 'k1', now: T0 + 9 });
  await claimLanes(s, WORKER.owner, { key: ALICE }); // held by a process of the source's
  await s.close();
  return file;
}

async function contents(store: Store) {
  const conversations = await store.conversations();
  return {
    conversations,
    inbox: await allInbound(store),
    outbox: await allOutbound(store),
    statuses: await store.statuses('wamid.bye'),
    transcripts: await Promise.all(conversations.map((c) => store.transcript(c.id))),
    timers: await Promise.all(conversations.map((c) => store.timers(c.id))),
    nextDue: await store.nextDue(),
    handoffs: await Promise.all(conversations.map((c) => store.handoffs(c.id))),
    openHandoffs: await store.openHandoffs(),
    agents: await store.agents(),
    agent: await store.agentByTokenHash('hash-of-anas-token'),
    session: await store.agentSession('hash-of-a-session', T0),
    log: await store.handoffLog(1),
    // Last, as they claim (the claim tokens differ by nature): the lanes and the sending row held by the source's owner.
    held: await store.renew(WORKER.owner, 60_000),
    events: (await store.claim({ ...WORKER, owner: 'copy-test' }, { kind: 'event', limit: 10, now: T0 + 10 })).map(({ claim: _, ...e }) => e),
    lanes: await store.claim({ ...WORKER, owner: 'copy-test' }, { kind: 'lane', limit: 10, now: T0 + 10 }),
  };
}

describe('copySqliteToPostgres', () => {
  it('copies every table in batches with its ids; the copy reads back the same through the port', async () => {
    const file = await filled();
    const url = await freshDatabaseUrl();
    const report = await copySqliteToPostgres(file, url, { batchSize: 2 });
    expect(report.tables).toEqual([
      { name: 'agents', rows: 1 },
      { name: 'agent_sessions', rows: 1 },
      { name: 'conversations', rows: 2 },
      { name: 'flow_submits', rows: 0 },
      { name: 'handoffs', rows: 1 },
      { name: 'handoff_events', rows: 2 },
      { name: 'handoff_log', rows: 3 },
      { name: 'inbox', rows: 3 },
      { name: 'lanes', rows: 2 },
      { name: 'outbox', rows: 5 },
      { name: 'statuses', rows: 1 },
      { name: 'timers', rows: 1 },
    ]);
    expect(await contents(await postgres.open(url))).toEqual(await contents(await sqlite.open(file)));
  });

  it('moves the id sequences past the copied ids', async () => {
    const url = await freshDatabaseUrl();
    await copySqliteToPostgres(await filled(), url);
    const pg = await postgres.open(url);
    expect((await pg.addInbound(inbound({ providerId: 'after' }))).id).toBe(4);
    const r = await pg.commitTurn(turn({ key: { botId: 'quiz', user: ALICE.user }, outbox: [text('new')], now: T0 + 10 }));
    expect(r).toMatchObject({ conversationId: 3, version: 1, outboxIds: [6] });
    await pg.commitTurn(turn({ key: BOB, handoff: { open: { timeoutMs: 1 } }, notifyHandoffs: true, now: T0 + 11 }));
    expect((await pg.handoffs(4)).map((h) => h.id)).toEqual([2]);
    expect((await pg.claim(WORKER, { kind: 'event', limit: 10, now: T0 + 20 })).map((e) => [e.id, e.handoffId])).toEqual([
      [1, 1],
      [3, 2],
    ]);
    // The agent's idempotency key came along: the same request is not queued again.
    expect(await pg.addAgentMessage({ conversationId: 1, agent: 'ana', outbound: text('ana here'), idempotencyKey: 'k1', now: T0 + 12 })).toEqual({ ok: true, outboxId: 5, duplicate: true });
  });

  it('refuses a target with rows, adding nothing', async () => {
    const url = await freshDatabaseUrl();
    const target = await postgres.open(url);
    await target.commitTurn(turn({ now: T0 }));
    const err = await copySqliteToPostgres(await filled(), url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ code: 'copy_target_not_empty' });
    expect((err as Error).message).toContain('(rows in conversations)');
    expect(await target.conversations()).toHaveLength(1);
    expect(await allInbound(target)).toEqual([]);
  });

  it('refuses a source that is not fully migrated', async () => {
    const Database = (await import('better-sqlite3')).default;
    const file = join(tempDir(), 'old.db');
    new Database(file).close();
    const err = await copySqliteToPostgres(file, await freshDatabaseUrl()).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'copy_source' });
    expect((err as Error).message).toContain('is missing migrations 0001_initial.sql');
  });
});
