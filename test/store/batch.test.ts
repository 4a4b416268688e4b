/**
 * Calls that arrive together: each gets the outcome it would get alone, on both stores. On
 * PostgreSQL they also share statements (group commit): fewer statements than calls reach the
 * database, and a batch that fails (one turn's conflict) leaves each call its own outcome.
 */
import { describe, expect, it } from 'vitest';
import { VersionConflictError } from '../../src/errors.js';
import type { PgStore } from '../../src/store/postgres/store.js';
import type { CommitResult, ConversationKey, Store } from '../../src/store/types.js';
import { DIALECTS, T0, claimLanes, claimSends, inbound, text, turn } from './helpers.js';

const OWNER = 'process-a';
const user = (i: number): ConversationKey => ({ botId: 'pizza', user: `+49160000${String(i).padStart(5, '0')}` });
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Counts the statements a PostgreSQL store sends (undefined on SQLite). */
function countStatements(store: Store): { readonly n: number | undefined } {
  const db = (store as Partial<PgStore>).db;
  if (db === undefined || !('pool' in db)) return { n: undefined };
  const counter = { n: 0 };
  const query = db.query.bind(db);
  const tx = db.tx.bind(db);
  db.query = ((sql: never, params?: never) => {
    counter.n++;
    return query(sql, params);
  }) as typeof db.query;
  db.tx = ((fn: never) => {
    counter.n++; // at least three round trips, counted as one
    return tx(fn);
  }) as typeof db.tx;
  return counter;
}

describe.each(DIALECTS)('calls that arrive together ($name)', ({ name, open: openStore }) => {
  it('inbounds: a redelivery in the same tick or of one stored before is known, each lane counting its new work once', async () => {
    const store = await openStore();
    const earlier = await store.addInbound(inbound({ ...user(9), providerId: 'known' }));
    const statements = countStatements(store);
    const calls = [
      ...range(12).map((i) => inbound({ ...user(i % 3), providerId: `p${i}` })),
      inbound({ ...user(0), providerId: 'p0' }), // the same provider id twice in one tick
      inbound({ ...user(9), providerId: 'known' }), // stored before
    ];
    const results = await Promise.all(calls.map((c) => store.addInbound(c)));
    expect(results.slice(0, 12).every((r) => !r.duplicate)).toBe(true);
    expect(results[12]).toEqual({ id: results[0]!.id, duplicate: true });
    expect(results[13]).toEqual({ id: earlier.id, duplicate: true });
    expect(new Set(results.slice(0, 12).map((r) => r.id)).size).toBe(12);
    const claims = await claimLanes(store, OWNER);
    expect(Object.fromEntries(claims.map((c) => [c.key.user, c.workSeq]))).toEqual({ [user(0).user]: 4, [user(1).user]: 4, [user(2).user]: 4, [user(9).user]: 1 });
    if (name === 'postgres') expect(statements.n).toBeLessThan(calls.length);
  });

  it('reads: each key its own active conversation and statuses', async () => {
    const store = await openStore();
    for (const i of range(6)) {
      await store.addInbound(inbound({ ...user(i), providerId: `a${i}` }));
      await store.addInbound(inbound({ ...user(i), providerId: `b${i}` }));
      if (i % 2 === 0) await store.commitTurn(turn({ key: user(i), snapshot: { n: i } }));
      await store.addStatus({ providerMessageId: `pm${i}`, status: 'delivered', receivedAt: T0 });
    }
    const statements = countStatements(store);
    const [active, statuses] = await Promise.all([Promise.all(range(7).map((i) => store.activeConversation(user(i)))), Promise.all(range(7).map((i) => store.statuses(`pm${i}`)))]);
    expect(active.map((c) => (c ? (c.snapshot as { n: number }).n : undefined))).toEqual([0, undefined, 2, undefined, 4, undefined, undefined]);
    expect(statuses.map((s) => s.map((x) => x.status))).toEqual([...range(6).map(() => ['delivered']), []]);
    if (name === 'postgres') expect(statements.n).toBeLessThan(14);
  });

  it('turns: a stale one among many conflicts alone and commits nothing; the others commit, their rows in order', async () => {
    const store = await openStore();
    const statements = countStatements(store);
    const first = await Promise.all(range(8).map((i) => store.commitTurn(turn({ key: user(i), outbox: [text(`hi ${i}`)] }))));
    if (name === 'postgres') expect(statements.n).toBeLessThan(8);
    const inbox = await Promise.all(range(8).map((i) => store.addInbound(inbound({ ...user(i) }))));
    const second = await Promise.allSettled(
      range(8).map((i) =>
        store.commitTurn(
          turn({
            key: user(i),
            conversationId: first[i]!.conversationId,
            expectedVersion: i === 3 ? 7 : 1, // turn 3 started from a version that is not the stored one
            inboxId: inbox[i]!.id,
            outbox: [text(`a ${i}`), text(`b ${i}`)],
            timers: { upsert: [{ key: 'idle', stateNode: 'menu', event: { type: 'idle' }, fireAt: T0 + 1_000 + i }], remove: [], activeStateNodes: ['menu'] },
          }),
        ),
      ),
    );
    expect(second[3]).toMatchObject({ status: 'rejected', reason: expect.any(VersionConflictError) });
    for (const i of range(8).filter((i) => i !== 3)) {
      const r = second[i]!;
      expect(r.status).toBe('fulfilled');
      const { outboxIds, version } = (r as PromiseFulfilledResult<CommitResult>).value;
      expect(version).toBe(2);
      expect(outboxIds).toHaveLength(2);
      expect(outboxIds[0]!).toBeLessThan(outboxIds[1]!);
      expect((await store.outbound(outboxIds[0]!))?.message).toEqual({ type: 'text', text: `a ${i}` });
      expect(await store.timers(first[i]!.conversationId)).toHaveLength(1);
      expect((await store.inbound(inbox[i]!.id))?.state).toBe('done');
    }
    expect((await store.conversation(first[3]!.conversationId))?.version).toBe(1);
    expect((await store.inbound(inbox[3]!.id))?.state).toBe('pending');
    expect(await store.timers(first[3]!.conversationId)).toEqual([]);
  });

  it('turns of different shapes in one batch: each gets its own outbox rows and timers', async () => {
    const store = await openStore();
    const first = await Promise.all(
      range(4).map((i) =>
        store.commitTurn(
          turn({
            key: user(i),
            timers: {
              upsert: [
                { key: 'a', stateNode: 'menu', event: { type: 'a' }, fireAt: T0 + 10 },
                { key: 'b', stateNode: 'menu', event: { type: 'b' }, fireAt: T0 + 20 },
                { key: 'c', stateNode: 'order', event: { type: 'c' }, fireAt: T0 + 30 },
              ],
              remove: [],
              activeStateNodes: ['menu', 'order'],
            },
          }),
        ),
      ),
    );
    const shapes = [
      { outbox: [], remove: ['a'], active: ['menu', 'order'], upsert: [] as string[] },
      { outbox: ['x', 'y', 'z'], remove: [], active: ['menu'], upsert: ['d'] },
      { outbox: ['only'], remove: ['a', 'b'], active: [], upsert: ['e', 'f'] },
      { outbox: [], remove: [], active: ['menu', 'order'], upsert: [] },
    ];
    const statements = countStatements(store);
    const second = await Promise.all(
      shapes.map((sh, i) =>
        store.commitTurn(
          turn({
            key: user(i),
            conversationId: first[i]!.conversationId,
            expectedVersion: 1,
            outbox: sh.outbox.map((b) => text(b)),
            timers: { upsert: sh.upsert.map((k) => ({ key: k, stateNode: 'menu', event: { type: k }, fireAt: T0 + 99 })), remove: sh.remove, activeStateNodes: sh.active },
          }),
        ),
      ),
    );
    if (name === 'postgres') expect(statements.n).toBeLessThan(4);
    const timerKeys = async (i: number) => (await store.timers(first[i]!.conversationId)).map((t) => t.key).sort();
    expect(await Promise.all(second.map(async (r) => Promise.all(r.outboxIds.map(async (id) => ((await store.outbound(id))!.message as { text: string }).text))))).toEqual(
      shapes.map((sh) => sh.outbox),
    );
    expect(await Promise.all(range(4).map(timerKeys))).toEqual([
      ['b', 'c'],
      ['a', 'b', 'd'],
      ['e', 'f'],
      ['a', 'b', 'c'],
    ]);
  });

  it('sends, lanes: settles with a stale claim, claims and settles lanes by key, each its own outcome', async () => {
    const store = await openStore();
    const { outboxIds } = await store.commitTurn(turn({ outbox: [text('x')] }));
    const others = await Promise.all(range(5).map((i) => store.commitTurn(turn({ key: user(i), outbox: [text(`o${i}`)] }))));
    for (const i of range(4)) await store.skipInbound((await store.addInbound(inbound({ ...user(i) }))).id, 'consumed', T0);
    const statements = countStatements(store);
    const rows = await claimSends(store);
    expect(rows).toHaveLength(6);
    const settled = await Promise.all(
      rows.map((r) => store.settleSend(r.id, r.id === outboxIds[0] ? 'not-the-claim' : r.claim!, { kind: 'sent', record: { state: 'sent', providerId: `pm-${r.id}`, httpStatus: 200 } }, T0 + 1)),
    );
    expect(settled).toEqual(rows.map((r) => r.id !== outboxIds[0]));
    expect((await store.outbound(outboxIds[0]!))?.state).toBe('sending');
    expect((await store.outbound(others[0]!.outboxIds[0]!))?.state).toBe('sent');

    const claims = await Promise.all(range(5).map((i) => claimLanes(store, OWNER, { key: user(i) })));
    expect(claims.map((c) => c.map((x) => [x.fence, x.workSeq]))).toEqual([[[1, 1]], [[1, 1]], [[1, 1]], [[1, 1]], [[1, 0]]]);
    expect(await Promise.all(range(5).map((i) => claimLanes(store, 'process-b', { key: user(i) })))).toEqual(range(5).map(() => []));
    await store.addInbound(inbound({ ...user(1), providerId: 'wamid.next' }));
    await store.skipInbound((await store.addInbound(inbound({ ...user(3) }))).id, 'consumed', T0);
    const outcomes = await Promise.all(range(5).map((i) => store.settleLane(i === 2 ? 'process-b' : OWNER, user(i), 1, i === 4 ? 0 : 1)));
    expect(outcomes).toEqual([
      { outcome: 'released' },
      { outcome: 'next', inbound: expect.objectContaining({ providerId: 'wamid.next', state: 'pending' }) },
      { outcome: 'lost' },
      { outcome: 'more', workSeq: 2 },
      { outcome: 'released' },
    ]);
    // 1 + 6 + 5 + 5 + 3 + 5 calls
    if (name === 'postgres') expect(statements.n).toBeLessThan(25);
  });
});
