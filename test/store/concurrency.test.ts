/**
 * Several store instances on one database, as several processes have them: every claim, timer,
 * turn and status is taken once, and per-conversation order holds. On PostgreSQL the instances'
 * pools really run in parallel (row locks, SKIP LOCKED); on SQLite they take turns on the file.
 */
import { describe, expect, it } from 'vitest';
import { VersionConflictError } from '../../src/errors.js';
import type { ConversationKey, Store } from '../../src/store/types.js';
import { DIALECTS, NO_TIMERS, T0, WORKER, allInbound, claimSends, inbound, sent as settleSent, text, turn } from './helpers.js';

const user = (i: number): ConversationKey => ({ botId: 'pizza', user: `+49151${String(i).padStart(8, '0')}` });

describe.each(DIALECTS)('$name', ({ open, fresh }) => {
  async function instances(n: number): Promise<Store[]> {
    const where = await fresh();
    const first = await open(where);
    return [first, ...(await Promise.all(Array.from({ length: n - 1 }, () => open(where))))];
  }

  it('four dispatchers send every outbox row once, in order per conversation', async () => {
    const stores = await instances(4);
    const conversations = 12;
    const perConversation = 6;
    for (let c = 0; c < conversations; c++) {
      await stores[0]!.commitTurn(turn({ key: user(c), outbox: Array.from({ length: perConversation }, (_, i) => text(`${c}:${i}`)), now: T0 }));
    }
    const sent: string[] = [];
    const inFlight = new Set<number>();
    const dispatcher = async (s: Store, i: number) => {
      const who = { owner: `dispatcher-${i}`, leaseMs: 60_000, lapsed: true };
      for (let idle = 0; idle < 5; ) {
        const claimed = await claimSends(s, T0, 3, who);
        if (!claimed.length) {
          idle++;
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        idle = 0;
        for (const row of claimed) {
          // Never two rows of one conversation in flight at once.
          expect(inFlight.has(row.conversationId)).toBe(false);
          inFlight.add(row.conversationId);
        }
        await new Promise((r) => setTimeout(r, 1));
        for (const row of claimed) {
          sent.push((row.message as { text: string }).text);
          inFlight.delete(row.conversationId);
          expect(await s.settleSend(row.id, row.claim!, { kind: 'sent', record: { state: 'sent', providerId: `p${row.id}` } }, T0)).toBe(true);
        }
      }
    };
    await Promise.all(stores.map(dispatcher));
    expect(sent).toHaveLength(conversations * perConversation);
    expect(new Set(sent).size).toBe(sent.length);
    for (let c = 0; c < conversations; c++) {
      expect(sent.filter((t) => t.startsWith(`${c}:`))).toEqual(Array.from({ length: perConversation }, (_, i) => `${c}:${i}`));
    }
  });

  it("a row another instance claimed after the claim lapsed is no longer the first claim's to record", async () => {
    const [a, b] = await instances(2);
    await a!.commitTurn(turn({ outbox: [text('once')], now: T0 }));
    // Each instance's first claim: the same row, the same count of claims before it.
    const A = { owner: 'process-a', leaseMs: 60_000, lapsed: true };
    const [first] = await claimSends(a!, T0, 1, A);
    await a!.renew(A.owner, 0);
    const [second] = await claimSends(b!, T0, 1, { ...A, owner: 'process-b' });
    expect(second).toMatchObject({ id: first!.id, attempts: 2, resends: 1 });
    expect(second!.claim).not.toBe(first!.claim);
    expect(await a!.settleSend(first!.id, first!.claim!, { kind: 'sent', record: { state: 'sent', providerId: 'wamid.late' } }, T0 + 1_500)).toBe(false);
    await a!.renew(A.owner, 60_000); // the row is not A's any more: its heartbeat keeps nothing of it
    expect(await claimSends(a!, T0, 1, A)).toEqual([]);
    expect(await b!.settleSend(second!.id, second!.claim!, { kind: 'sent', record: { state: 'sent', providerId: 'wamid.B' } }, T0 + 1_500)).toBe(true);
    expect(await a!.outbound(first!.id)).toMatchObject({ state: 'sent', providerId: 'wamid.B', claim: null });
  });

  it('three timer loops fire each due timer once', async () => {
    const stores = await instances(3);
    const n = 60;
    for (let c = 0; c < n / 3; c++) {
      await stores[0]!.commitTurn(turn({ key: user(c), timers: { ...NO_TIMERS, upsert: [0, 1, 2].map((k) => ({ key: `t${k}`, stateNode: null, event: { type: `t${k}` }, fireAt: T0 + k })) } }));
    }
    const fire = async (s: Store) => {
      let fired = 0;
      for (let got = 1; got > 0; ) {
        got = (await s.claim(WORKER, { kind: 'timer', limit: 7, now: T0 + 10 })).length;
        fired += got;
      }
      return fired;
    };
    const counts = await Promise.all(stores.map(fire));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(n);
    const inbox = await allInbound(stores[0]!, 2 * n);
    expect(inbox.filter((r) => r.source === 'timer')).toHaveLength(n);
    expect(await stores[1]!.nextDue()).toBeUndefined();
  });

  it('the same turn committed by five processes at once runs once', async () => {
    const stores = await instances(5);
    await stores[0]!.commitTurn(turn({ now: T0 }));
    const { id: inboxId } = await stores[0]!.addInbound(inbound({ providerId: 'wamid.race' }));
    const results = await Promise.allSettled(stores.map((s, i) => s.commitTurn(turn({ conversationId: 1, expectedVersion: 1, inboxId, outbox: [text(`from ${i}`)], now: T0 + 1 }))));
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(VersionConflictError);
    expect((await stores[0]!.conversation(1))?.version).toBe(2);
    expect((await stores[0]!.transcript(1)).filter((e) => e.direction === 'out')).toHaveLength(1);
  });

  it('five processes starting the same conversation at once create it once', async () => {
    const stores = await instances(5);
    const results = await Promise.allSettled(stores.map(() => stores[0]!.commitTurn(turn({ now: T0 }))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(await stores[2]!.conversations()).toHaveLength(1);
  });

  it('statuses reported at once through several processes end at the furthest one', async () => {
    const stores = await instances(4);
    await stores[0]!.commitTurn(turn({ outbox: [text('hi')], now: T0 }));
    const [row] = await claimSends(stores[0]!);
    await settleSent(stores[0]!, row!, { state: 'sent', providerId: 'wamid.S' });
    const reports = ['read', 'sent', 'delivered', 'read', 'delivered', 'sent'];
    await Promise.all(reports.map((status, i) => stores[i % stores.length]!.addStatus({ providerMessageId: 'wamid.S', status, receivedAt: T0 + i })));
    expect((await stores[3]!.outbound(row!.id))?.deliveryStatus).toBe('read');
    expect((await stores[1]!.statuses('wamid.S')).map((s) => s.status).sort()).toEqual(['delivered', 'read', 'sent']);
  });

  it('idle expiry racing a turn: either the turn commits or the conversation expires, never both', async () => {
    const stores = await instances(2);
    for (let c = 0; c < 10; c++) await stores[0]!.commitTurn(turn({ key: user(c), now: T0 }));
    const turns = Array.from({ length: 10 }, (_, c) => stores[1]!.commitTurn(turn({ key: user(c), conversationId: c + 1, expectedVersion: 1, now: T0 + 100 })));
    const expired = stores[0]!.expireIdle('pizza', T0 + 50, T0 + 100);
    const results = await Promise.allSettled(turns);
    const n = await expired;
    for (const [c, r] of results.entries()) {
      const conv = await stores[0]!.conversation(c + 1);
      if (r.status === 'fulfilled') expect(conv).toMatchObject({ status: 'active', version: 2 });
      else expect(conv).toMatchObject({ status: 'expired', version: 2 });
    }
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(n);
  });
});
